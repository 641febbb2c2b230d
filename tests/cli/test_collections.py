"""Collections from the command line: list, create, delete, a fit on a collection's own documents, its pictures."""

from __future__ import annotations

import json

import pytest

from app.correction.publication import read_artifact_file
from tests.cli.conftest import WORDS, run_cli


@pytest.mark.process
def test_collections_from_the_command_line_and_a_fit_on_a_collections_own_documents(env, tmp_path, store):
    def listed() -> dict:
        r = run_cli("collections", "list", "--json", env=env)
        assert r.returncode == 0, r.stderr[-2000:]
        return {c["name"]: c for c in map(json.loads, r.stdout.strip().splitlines())}

    assert run_cli("collections", "create", "notes", "--pooling", "cls", env=env).returncode == 0
    again = run_cli("collections", "create", "notes", env=env)
    assert again.returncode == 2 and "exists" in again.stderr
    corpus = tmp_path / "notes.txt"
    corpus.write_text(
        "\n".join(f"the {a} and the {b} near a {c}" for a in WORDS for b in WORDS[::2] for c in WORDS[::4])
    )
    r = run_cli("index", "--corpus", str(corpus), "--collection", "notes", env=env)
    assert r.returncode == 0 and "the store holds 512" in r.stdout, r.stderr[-2000:]
    collections = listed()
    assert collections["default"]["documents"] == 0
    assert (collections["notes"]["documents"], collections["notes"]["pooling"]) == (512, "cls")
    r = run_cli(
        "fit", "--collection", "notes", "--method", "whitening", "--alpha", "0.5", "--dim", "16", "--publish", env=env
    )
    assert r.returncode == 0, r.stderr[-2000:]
    fitted = r.stdout.strip().splitlines()[-1]
    assert fitted.startswith("whitening-") and "published" in r.stderr
    assert listed()["notes"]["correction"] == fitted and listed()["notes"]["open"] is False  # listed from Redis
    artifact = read_artifact_file(tmp_path / "data" / "artifacts" / f"{fitted}.npz")
    assert artifact.corpus.size == 512 and artifact.corpus.source.startswith("collection:notes:")
    assert artifact.out_dim == 16
    r = run_cli("fit", "--collection", "notes", "--method", "auto", env=env)  # judged on STS-B pairs against it
    assert r.returncode == 0 and '"general": "' + fitted in r.stderr, r.stderr[-2000:]
    assert run_cli("fit", "--collection", "nope", env=env).returncode == 2
    assert run_cli("fit", env=env).returncode == 2  # --corpus or --collection
    assert store.artifacts.get(artifact.backbone.fingerprint, fitted) is not None
    assert run_cli("collections", "delete", "notes", env=env).returncode == 0
    assert list(listed()) == ["default"]
    assert store.artifacts.get(artifact.backbone.fingerprint, fitted) is None  # its own corrections went with it
