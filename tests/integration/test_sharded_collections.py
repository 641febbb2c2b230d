"""A named collection created with `shards: 3`: kept in three parts of the store, each searched (dense, lexical
with the whole collection's BM25 statistics, filters) by a Ray Serve shard; it answers every route as the same
collection kept whole does, and deleting it leaves no key and no shard; a search right after a 201 sees the new
documents; kill -9 of the server leaves none of its local Ray instance's processes."""

import signal
import time

import httpx
import psutil
import pytest
import redis

from app.benchmarks.ranking_match import same_ranking
from app.store.embedded import EmbeddedRedis
from tests.conftest import CORPUS, free_port, server_env, server_log, start_server, stop_server, until_loaded
from tests.shards.test_deployment import until

pytest.importorskip("ray.serve")
QUERIES = ["the cat sleeps in the park", "a plane flies over the city", "my friend sings with joy", "river"]


def hits(c: httpx.Client, name: str, q: str, mode: str, **extra) -> list[tuple[str, float]]:
    body = {"q": q, "k": 10, "mode": mode, **extra}
    found = c.post(f"/collections/{name}/search", json=body)
    assert found.status_code == 200, found.text
    assert not found.json()["partial"], found.json()["missing_shards"]
    return [(h["id"], h["rank_score"]) for h in found.json()["results"]]


def test_a_collection_kept_in_three_parts_answers_as_one_kept_whole(tmp_path):
    port = free_port()
    env = server_env(tmp_path, port, CE_BACKBONE="hashing", CE_FOLLOW_INTERVAL="0.2", CE_SHARD_TIMEOUT="30")
    proc = start_server(env, f"http://127.0.0.1:{port}")
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as c:
            for name, shards in (("whole", 0), ("parts", 3)):
                started = time.monotonic()
                created = c.post("/collections", json={"name": name, "pooling": "mean", "shards": shards})
                assert created.status_code == 201 and time.monotonic() - started < 2, created.text
                assert created.json()["state"] == ("loading" if shards else "ready")  # Ray starts after the 201
                described = until_loaded(c, name)
                assert described["shards"] == shards
                docs = [{"id": f"d{i}", "text": t, "metadata": {"even": i % 2 == 0}} for i, t in enumerate(CORPUS)]
                for start in range(0, len(docs), 100):
                    r = c.post(f"/collections/{name}/documents", json={"documents": docs[start : start + 100]})
                    assert r.status_code == 201, r.text
                assert c.delete(f"/collections/{name}/documents/d3").status_code in (200, 204)
            described = c.get("/collections/parts").json()
            assert described["documents"] == len(CORPUS) - 1 and described["shards"] == 3
            assert [s["shard"] for s in described["index"]["shards"]] == [0, 1, 2]
            assert c.post("/collections/parts/verify").status_code == 409  # each shard verifies its own part
            assert c.post("/collections/parts/fit", json={"method": "whitening"}).status_code == 409
            assert c.post("/collections/parts/tune").status_code == 409
            for path, body in (("embed", {"texts": ["a cat"]}), ("tokenize", {"texts": ["a cat"]})):
                answers = [c.post(f"/collections/{n}/{path}", json=body) for n in ("parts", "whole")]
                assert answers[0].status_code == 200 and answers[0].json() == answers[1].json()
            judged = {"judgments": [{"query": "cat", "id": "d0", "grade": 2}]}
            assert c.post("/collections/parts/judgments", json=judged).status_code == 201
            assert len(c.get("/collections/parts/judgments").json()["judgments"]) == 1
            exported = c.get("/collections/parts/export").text.splitlines()
            assert sum('"document"' in line for line in exported) == len(CORPUS) - 1
            assert '"shards": 3' in exported[0] or '"shards":3' in exported[0]
            lines = "\n".join(exported)
            ndjson, deadline = {"content-type": "application/x-ndjson"}, time.monotonic() + 120
            while (imported := c.post("/collections/copy/import", content=lines, headers=ndjson)).status_code == 503:
                assert time.monotonic() < deadline, imported.text  # created at once, its shards starting: sent again
                time.sleep(int(imported.headers["Retry-After"]))
            assert imported.status_code == 200, imported.text
            assert until_loaded(c, "copy")["shards"] == 3  # created as exported: in three parts
            until(lambda: same_ranking(hits(c, "copy", "cat", "hybrid"), hits(c, "parts", "cat", "hybrid")))
            assert c.get("/collections/parts/documents/d7").json()["metadata"] == {"even": False}
            assert c.get("/collections/parts/documents/d3").status_code == 404
            until(lambda: same_ranking(hits(c, "parts", "cat", "lexical"), hits(c, "whole", "cat", "lexical")))
            for q in QUERIES:
                for mode in ("dense", "lexical", "hybrid"):
                    assert same_ranking(hits(c, "parts", q, mode), hits(c, "whole", q, mode)), (q, mode)
                for where in ({"even": True}, {"even": {"$ne": True}}, {"$not": {"even": {"$in": [True]}}}):
                    kept = {"filter": where}  # the shards answer each operator as the whole collection does
                    assert same_ranking(hits(c, "parts", q, "hybrid", **kept), hits(c, "whole", q, "hybrid", **kept))
            for bad in ({}, {"even": [1]}):  # refused by the server, as the whole collection refuses it
                refused = [
                    c.post(f"/collections/{n}/search", json={"q": "x", "filter": bad}) for n in ("parts", "whole")
                ]
                assert [r.status_code for r in refused] == [422, 422]
                assert refused[0].json()["error"]["message"] == refused[1].json()["error"]["message"]
            assert c.delete("/collections/parts").status_code in (200, 204)
            assert c.get("/collections/parts").status_code == 404
            store = redis.Redis(unix_socket_path=str(EmbeddedRedis(tmp_path / "data" / "redis").socket_path))
            # every part's keys, every log: erased by the DELETE, and again once its shards have stopped writing
            until(lambda: list(store.scan_iter(match="*collection:parts:*")) == [])
            assert list(store.scan_iter(match="*collection:whole:*")) != []
            # Its shards stop after the 204; one of the same name created at once deploys once they have stopped.
            again = c.post("/collections", json={"name": "parts", "pooling": "mean", "shards": 3})
            assert again.status_code == 201 and until_loaded(c, "parts")["shards"] == 3, again.text
            docs = [{"id": f"n{i}", "text": t} for i, t in enumerate(CORPUS[:20])]
            assert c.post("/collections/parts/documents", json={"documents": docs}).status_code == 201
            until(lambda: [h[0] for h in hits(c, "parts", CORPUS[4], "dense")][:1] == ["n4"])
            read_your_writes(c)
        ray_tree = {p.pid: p.create_time() for p in psutil.Process(proc.pid).children(recursive=True)}
        assert {"raylet", "gcs_server", "ray::DashboardAgent"} <= {psutil.Process(p).name() for p in ray_tree}
        proc.send_signal(signal.SIGKILL)  # no process of its local Ray instance may outlive it
        proc.wait(timeout=10)
        assert until_ended(ray_tree, 10.0) == []
    finally:
        if proc.poll() is None:
            stop_server(proc)
    assert "unhandled error" not in server_log(proc)


def read_your_writes(c: httpx.Client) -> None:
    """A search right after a 201 finds the new documents in every mode: each shard applies the change log before
    it answers (the follower, at 0.2 s here, comes after the search has answered)."""
    for n in range(4):
        docs = [{"id": f"r{n}-{i}", "text": f"round{n} word{i} about herons"} for i in range(6)]
        assert c.post("/collections/parts/documents", json={"documents": docs}).status_code == 201
        for mode in ("lexical", "dense", "hybrid"):
            assert hits(c, "parts", f"round{n} word3", mode)[0][0] == f"r{n}-3", (n, mode)


def until_ended(processes: dict[int, float], seconds: float) -> list[str]:
    """The names of those still running (the same pid and start time, not a zombie) after up to `seconds`."""
    deadline, left = time.monotonic() + seconds, list(processes)
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = [pid for pid, started in processes.items() if running(pid, started)]
    return [psutil.Process(pid).name() for pid in left if running(pid, processes[pid])]


def running(pid: int, started: float) -> bool:
    try:
        process = psutil.Process(pid)
        return process.create_time() == started and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
