"""The server on a Redis Cluster (3 primaries, a replica each): every route of the default and a named collection,
the same answers as on one Redis, a restart that keeps everything, and a deleted collection's keys gone from every
slot."""

import httpx

from app.benchmarks.http import free_port
from tests.conftest import server_env, start_server, stop_server, until_loaded

TEXTS = [f"document {i} about {w}" for i in range(60) for w in ("cats", "planes", "rivers")[i % 3 : i % 3 + 1]]


def served(tmp_path, redis_url: str, prefix: str):
    port = free_port()
    env = server_env(tmp_path, port, CE_BACKBONE="hashing", CE_REDIS_URL=redis_url, CE_KEY_PREFIX=prefix)
    base = f"http://127.0.0.1:{port}"
    return start_server(env, base), httpx.Client(base_url=base, timeout=30)


def exercise(client: httpx.Client) -> dict:
    """Write, read, search and delete through both collections; what they answered."""
    if client.get("/collections/notes").status_code == 404:
        assert client.post("/collections", json={"name": "notes", "pooling": "cls"}).status_code == 201
        until_loaded(client, "notes")
    answers = {}
    for path in ("", "/collections/notes"):
        docs = [{"id": f"d{i}", "text": t, "metadata": {"i": i}} for i, t in enumerate(TEXTS)]
        assert client.post(f"{path}/documents", json={"documents": docs}).status_code == 201
        assert client.delete(f"{path}/documents/d1").status_code in (200, 204)
        answers[path] = {
            mode: [
                h["id"]
                for h in client.get(f"{path}/search", params={"q": "cats 4", "k": 5, "mode": mode}).json()["results"]
            ]
            for mode in ("dense", "lexical", "hybrid")
        }
        answers[path]["doc"] = client.get(f"{path}/documents/d7").json()["metadata"]
        answers[path]["gone"] = client.get(f"{path}/documents/d1").status_code
    return answers


def test_the_server_on_a_cluster_answers_as_on_one_redis_and_a_deleted_collection_leaves_no_key(
    tmp_path, redis_cluster, redis_url, key_prefix
):
    proc, client = served(tmp_path / "one", redis_url, key_prefix)
    try:
        on_one_redis = exercise(client)
    finally:
        stop_server(proc)
    proc, client = served(tmp_path / "cluster", redis_cluster.url, key_prefix)
    try:
        on_the_cluster = exercise(client)
        assert on_the_cluster == on_one_redis
        assert on_the_cluster["/collections/notes"]["gone"] == 404
    finally:
        stop_server(proc)
    proc, client = served(tmp_path / "cluster-again", redis_cluster.url, key_prefix)  # no snapshot: from Redis
    try:
        assert client.get("/collections/notes").json()["documents"] == len(TEXTS) - 1
        assert client.get("/collections/notes/documents/d7").json()["metadata"] == {"i": 7}
        assert client.delete("/collections/notes").status_code in (200, 204)
    finally:
        stop_server(proc)
    left = [
        key
        for port in redis_cluster.live()
        for key in redis_cluster.node(port).scan_iter(match=f"{key_prefix}:*collection:notes*", count=1000)
    ]
    assert left == []
