"""A server with CE_SHARDS: its /search fans out to Ray Serve shards on a local Ray instance it started, answers
as brute force does over the corrected vectors, and says `partial` while a killed shard is away."""

import os
import signal
import time
from contextlib import suppress
from pathlib import Path

import httpx
import numpy as np
import pytest

from app.backbones import build_backbone
from app.core.config import Settings
from app.correction.publication import write_artifact_file
from app.offline.fit import fit_artifact
from tests.conftest import CORPUS, free_port, server_env, server_log, start_server, stop_server
from tests.shards.test_deployment import until

pytest.importorskip("ray.serve")


def expected_top(c: httpx.Client, query: str, k: int, *, even: bool = False) -> list[str]:
    """Brute force over /embed's vectors (the search space, when it is shared with similarity)."""
    vectors = np.array(c.post("/embed", json={"texts": CORPUS}).json()["embeddings"])
    (q,) = c.post("/embed", json={"texts": [query]}).json()["embeddings"]
    ranked = [f"d{i}" for i in np.argsort(-(vectors @ np.array(q)), kind="stable") if not even or i % 2 == 0]
    return ranked[:k]


@pytest.mark.process
def test_a_sharded_server_answers_as_brute_force_and_says_partial_while_a_shard_is_down(tmp_path):
    models = tmp_path / "models"
    backbone = build_backbone(Settings(backbone="hashing"))
    artifact = fit_artifact(backbone, CORPUS, "whitening", {"alpha": 0.5, "dim": 8}, progress=False)
    write_artifact_file(artifact, models / "hashing.npz")
    port = free_port()
    env = server_env(
        tmp_path,
        port,
        CE_BACKBONE="hashing",
        CE_MODELS_DIR=str(models),
        CE_SHARDS="3",
        CE_FOLLOW_INTERVAL="0.2",
        CE_SNAPSHOT_INTERVAL="1",
        CE_SHARD_TIMEOUT="1",
    )
    proc = start_server(env, f"http://127.0.0.1:{port}")
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as c:
            docs = [{"id": f"d{i}", "text": t, "metadata": {"even": i % 2 == 0}} for i, t in enumerate(CORPUS)]
            for start in range(0, len(docs), 100):
                assert c.post("/documents", json={"documents": docs[start : start + 100]}).status_code == 201
            shards = until(
                lambda: (
                    (s := c.get("/info").json()["index"]["shards"])
                    and sum(x["documents"] for x in s) == len(CORPUS)
                    and s
                )
            )
            assert [s["shard"] for s in shards] == [0, 1, 2] and {s["correction"] for s in shards} == {artifact.id}
            served = c.get("/info").json()["index"]  # the server keeps the keys; the vectors are in the shards
            assert (served["factory"], served["size"], served["documents"]) == ("shards", len(CORPUS), len(CORPUS))

            queries = ["the cat sleeps in the park", "a plane flies over the city", "my friend sings with joy"]
            for q in queries:
                found = c.get("/search", params={"q": q, "k": 10, "mode": "dense"}).json()
                assert found["search_space"]["shared_with_similarity"] and found["correction"] == artifact.id
                assert (found["partial"], found["missing_shards"]) == (False, [])
                assert [h["id"] for h in found["results"]] == expected_top(c, q, 10)
                even = c.post("/search", json={"q": q, "k": 5, "mode": "dense", "filter": {"even": True}}).json()
                assert [h["id"] for h in even["results"]] == expected_top(c, q, 5, even=True)  # filtered in the shards

            time.sleep(1.5)  # past the snapshot interval: each shard has its own snapshot
            os.kill(shards[1]["pid"], signal.SIGKILL)
            time.sleep(0.2)
            down = c.get("/search", params={"q": queries[0], "k": 10, "mode": "dense"})
            assert down.status_code == 200 and (down.json()["partial"], down.json()["missing_shards"]) == (True, [1])
            assert len(down.json()["results"]) == 10
            until(lambda: not c.get("/search", params={"q": queries[0], "mode": "dense"}).json()["partial"])
            back = c.get("/info").json()["index"]["shards"]
            assert back[1]["pid"] != shards[1]["pid"] and sum(s["documents"] for s in back) == len(CORPUS)
            for q in queries:
                found = c.get("/search", params={"q": q, "k": 10, "mode": "hybrid"}).json()
                assert not found["partial"] and len(found["results"]) == 10
                dense = c.get("/search", params={"q": q, "k": 10, "mode": "dense"}).json()["results"]
                assert [h["id"] for h in dense] == expected_top(c, q, 10)
    finally:
        stop_server(proc)
    assert "unhandled error" not in server_log(proc)
    assert redis_processes(tmp_path / "data") == []  # it stopped its embedded Redis on the way out, Ray or not


def redis_processes(data_dir) -> list[int]:
    """Pids of the redis-servers serving from `data_dir`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with suppress(OSError):
            if "redis-server" in (text := cmdline.read_text()) and str(data_dir) in text:
                found.append(int(cmdline.parent.name))
    return found
