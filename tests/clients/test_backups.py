"""A collection exported from one real server and imported into a fresh one, through the CLI: the same answers,
nothing encoded again, and an interrupted import resumed."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest

from tests.clients.conftest import API_KEY, keyed_server
from tests.conftest import ROOT, server_env

WORDS = "river stone cloud paper window garden silver engine market letter autumn bridge".split()


def cli(*args: str, env: dict) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def fresh_server(tmp_path, onnx_graphs):
    with keyed_server(tmp_path, onnx_graphs) as url:
        yield url


def answers(http: httpx.Client, name: str, queries: list[str]) -> list[list[tuple[str, float]]]:
    out = []
    for q in queries:
        hits = http.post(f"/collections/{name}/search", json={"q": q, "k": 5}).json()["results"]
        out.append([(h["id"], round(h["score"], 5)) for h in hits])
    return out


def test_export_then_import_answers_alike_without_encoding_and_resumes(
    client, collection, server_url, fresh_server, tmp_path
):
    docs = [
        {
            "id": f"d{i}",
            "text": " ".join(WORDS[(i * 7 + j) % 12] for j in range(5 + i % 9)) + f" item {i}",
            "metadata": {"n": i},
        }
        for i in range(300)
    ]
    docs[0]["text"] = "a long document " + "with many words " * 150  # several passages
    client.collection(collection).add_documents(docs)
    env = {**server_env(tmp_path, 0), "CE_API_KEY": API_KEY}
    out = tmp_path / "backup.jsonl"
    assert (
        cli("export", "--collection", collection, "--url", server_url, "--out", str(out), env=env)["documents"] == 300
    )
    lines = out.read_text().splitlines()
    partial = tmp_path / "partial.jsonl"  # an import cut short after 120 documents
    partial.write_text("\n".join(lines[:122]) + "\n")

    first = cli("import", "--collection", collection, "--url", fresh_server, "--file", str(partial), env=env)
    assert (first["from_vectors"], first["encoded"], first["skipped"]) == (120, 0, 0)
    second = cli("import", "--collection", collection, "--url", fresh_server, "--file", str(out), env=env)
    assert (second["from_vectors"], second["encoded"], second["skipped"]) == (180, 0, 120)

    headers = {"Authorization": f"Bearer {API_KEY}"}
    queries = [" ".join(WORDS[(q * 5 + j) % 12] for j in range(1 + q % 4)) for q in range(50)]
    with (
        httpx.Client(base_url=server_url, headers=headers) as a,
        httpx.Client(base_url=fresh_server, headers=headers) as b,
    ):
        source, copy = a.get(f"/collections/{collection}").json(), b.get(f"/collections/{collection}").json()
        assert copy["documents"] == 300 and copy["correction"] == source["correction"] is not None
        assert answers(b, collection, queries) == answers(a, collection, queries)
        assert (
            b.get(f"/collections/{collection}/documents/d0").json()
            == a.get(f"/collections/{collection}/documents/d0").json()
        )
        metrics = b.get("/metrics").text
    assert f'ce_imported_documents_total{{collection="{collection}",how="encoded"}} 0.0' in metrics
    assert f'ce_imported_documents_total{{collection="{collection}",how="from_vectors"}} 300.0' in metrics
