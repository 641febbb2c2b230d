"""`fit` and `index` on Ray: the same artifact as one process fits, and the API's ids written once."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.backbones import build_backbone
from app.core.config import Settings
from app.correction.publication import read_artifact_file
from app.services.documents import document_id
from tests.cli.conftest import run_cli
from tests.conftest import CORPUS, STS


@pytest.mark.process
def test_fit_on_ray_equals_the_single_process_fit(env, tmp_path):
    corpus = STS / "sts-dev.csv"
    args = ["fit", "--corpus", str(corpus), "--method", "whitening", "--alpha", "0.5", "--dim", "16"]
    local = run_cli(*args, "--out", str(tmp_path / "local.npz"), env=env)
    ray = run_cli(*args, "--engine", "ray", "--workers", "2", "--out", str(tmp_path / "ray.npz"), env=env)
    assert local.returncode == 0 and ray.returncode == 0, ray.stderr[-3000:]
    a, b = read_artifact_file(tmp_path / "local.npz"), read_artifact_file(tmp_path / "ray.npz")
    assert a.corpus == b.corpus and a.params == b.params
    np.testing.assert_allclose(b.mu, a.mu, rtol=1e-6, atol=1e-7)  # the corpus mean
    # W = U S^-1/2 from the covariance: compare W W^T, which does not depend on the eigenvectors' signs
    np.testing.assert_allclose(b.W @ b.W.T, a.W @ a.W.T, rtol=1e-5, atol=1e-6)
    assert b.extra["isotropy"]["corrected"]["dim"] == 16


@pytest.mark.process
def test_index_on_ray_writes_the_api_ids_once(env, store, tmp_path):
    docs = tmp_path / "docs.jsonl"
    lines = [json.dumps({"id": "given", "text": "the cat sleeps", "metadata": {"k": 1}})] + CORPUS[:60]
    docs.write_text("\n".join(lines) + "\n")
    for _ in range(2):  # re-running adds nothing
        r = run_cli("index", "--corpus", str(docs), "--engine", "ray", "--workers", "2", env=env)
        assert r.returncode == 0, r.stderr[-3000:]
    assert "the store holds 61" in r.stdout
    key = build_backbone(Settings(backbone="hashing")).fingerprint
    assert store.documents.count(key) == 61
    given, hashed = store.documents.get(key, ["given", document_id(CORPUS[5])])
    assert json.loads(given.metadata_json) == {"k": 1} and hashed.text == CORPUS[5]
