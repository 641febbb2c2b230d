"""Scale-out: fit and bulk indexing on a local Ray instance, and API replicas sharing one real Redis."""

from __future__ import annotations

import json
import time

import httpx
import numpy as np

from app.backbones import build_backbone
from app.core.config import Settings
from app.correction.registry import publish, read_artifact_file
from app.offline.fit import fit_artifact
from app.services.documents import document_id
from tests.api.conftest import CORPUS
from tests.conftest import STS, free_port, server_env, start_server, stop_server
from tests.integration.conftest import run_cli


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


def test_index_on_ray_writes_the_api_ids_once(env, store, tmp_path):
    docs = tmp_path / "docs.jsonl"
    lines = [json.dumps({"id": "given", "text": "the cat sleeps", "metadata": {"k": 1}})] + CORPUS[:60]
    docs.write_text("\n".join(lines) + "\n")
    for _ in range(2):  # re-running adds nothing
        r = run_cli("index", "--corpus", str(docs), "--engine", "ray", "--workers", "2", env=env)
        assert r.returncode == 0, r.stderr[-3000:]
    assert "the store holds 61" in r.stdout
    space = build_backbone(Settings(backbone="hashing")).fingerprint
    assert store.count_documents(space) == 61
    given, hashed = store.get_documents(space, ["given", document_id(CORPUS[5])])
    assert json.loads(given.metadata_json) == {"k": 1} and hashed.text == CORPUS[5]


def test_replicas_on_one_redis_serve_a_new_correction_within_5_s(redis_url, key_prefix, store, tmp_path):
    replicas = []
    try:
        for n in range(2):
            port = free_port()
            env = server_env(tmp_path / f"r{n}", port, CE_BACKBONE="hashing", CE_REDIS_URL=redis_url,
                             CE_KEY_PREFIX=key_prefix, CE_MODELS_DIR=str(tmp_path / "no-models"))  # fmt: skip
            base = f"http://127.0.0.1:{port}"
            replicas.append((start_server(env, base), base))
        first = httpx.post(f"{replicas[0][1]}/documents", json={"documents": [{"id": "x", "text": "a dog runs"}]})
        assert first.status_code == 201
        backbone = build_backbone(Settings(backbone="hashing"))
        artifact = fit_artifact(backbone, CORPUS, "whitening", {"alpha": 0.5, "dim": 8}, progress=False)
        published = time.monotonic()
        publish(store, artifact)  # what `fit --publish` does, from any machine
        waiting = {base for _, base in replicas}
        while waiting and time.monotonic() - published < 5:
            for base in list(waiting):
                info = httpx.get(f"{base}/info").json()
                if info["correction"] and info["correction"]["id"] == artifact.id:
                    assert info["index"]["correction"] == artifact.id and info["index"]["size"] == 1
                    waiting.discard(base)
            time.sleep(0.1)
        assert not waiting, f"not serving {artifact.id} 5 s after it was published: {waiting}"
        hits = httpx.get(f"{replicas[1][1]}/search", params={"q": "a dog runs"}).json()
        assert hits["correction"] == artifact.id and [h["id"] for h in hits["results"]] == ["x"]
    finally:
        for proc, _ in replicas:
            stop_server(proc)
