"""A collection kept in three parts on a Redis Cluster (3 primaries, a replica each) and searched by shards on a
Ray cluster of three node processes: a primary killed while documents stream in through the API, its replica takes
over, ingestion resumes once the node is back, and every acknowledged document is found in every mode."""

import threading
import time

import httpx
import pytest

from app.store.local_cluster import LocalRedisCluster
from tests.conftest import free_port, server_env, server_log, start_server, stop_server, until_loaded
from tests.shards.test_deployment import until

ray = pytest.importorskip("ray")


@pytest.fixture
def ray_nodes():
    from ray.cluster_utils import Cluster

    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
    for _ in range(2):
        nodes.add_node(num_cpus=2)
    yield nodes
    nodes.shutdown()


def ids_keys(cluster: LocalRedisCluster, prefix: str) -> list[str]:
    """The id sets of the collection's parts, as the primaries hold them."""
    found = set()
    for port in cluster.live():
        found |= {k.decode() for k in cluster.node(port).scan_iter(match=f"{prefix}:docs:*", count=1000)}
    return sorted(found)


def text_of(i: int) -> str:
    return f"note tok{i} about {('cats', 'planes', 'rivers', 'songs')[i % 4]} and number {i % 97}"


def test_a_primary_killed_mid_ingestion_loses_no_acknowledged_document_in_any_mode(
    tmp_path, ray_nodes, own_redis_cluster, key_prefix
):
    redis_cluster = own_redis_cluster
    port = free_port()
    env = server_env(
        tmp_path,
        port,
        CE_BACKBONE="hashing",
        CE_REDIS_URL=redis_cluster.url,
        CE_KEY_PREFIX=key_prefix,
        RAY_ADDRESS=ray_nodes.address,  # a shard then reserves one CPU: they spread over the nodes
        CE_FOLLOW_INTERVAL="0.2",
        CE_SHARD_TIMEOUT="30",
    )
    proc = start_server(env, f"http://127.0.0.1:{port}")
    acknowledged, refused, stop = [], [], threading.Event()
    try:
        c = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
        assert c.post("/collections", json={"name": "notes", "shards": 3}).status_code == 201
        assert until_loaded(c, "notes")["shards"] == 3

        def ingest():
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as w:
                batch = 0
                while not stop.is_set():
                    docs = [{"id": f"n{batch * 20 + j}", "text": text_of(batch * 20 + j)} for j in range(20)]
                    r = w.post("/collections/notes/documents", json={"documents": docs})
                    if r.status_code == 201:
                        acknowledged.extend(d["id"] for d in docs)
                        batch += 1
                    else:  # 503: not acknowledged; the same batch is sent again, as a client would
                        refused.append(r.status_code)
                        time.sleep(0.1)

        writer = threading.Thread(target=ingest)
        writer.start()
        try:
            until(lambda: len(acknowledged) >= 400)
            part = ids_keys(redis_cluster, key_prefix)[0]  # one part's id set: its slot's primary is killed
            victim = redis_cluster.primary_of(part)
            redis_cluster.kill(victim)
            until(lambda: redis_cluster.primary_of(part) != victim)
            redis_cluster.start_node(victim)  # back, as its replica's replica
            resumed = len(acknowledged)
            until(lambda: len(acknowledged) >= resumed + 400)
        finally:
            stop.set()
            writer.join()
        assert set(refused) <= {503}
        last = {"q": f"tok{acknowledged[-1][1:]}", "k": 1, "mode": "lexical"}
        until(lambda: c.post("/collections/notes/search", json=last).json()["results"])  # the shards caught up
        for doc_id in acknowledged[::25] + acknowledged[-5:]:
            i = int(doc_id[1:])
            assert c.get(f"/collections/notes/documents/{doc_id}").json()["text"] == text_of(i)
            for mode, q in (("lexical", f"tok{i}"), ("dense", text_of(i)), ("hybrid", text_of(i))):
                found = c.post("/collections/notes/search", json={"q": q, "k": 1, "mode": mode}).json()
                assert [h["id"] for h in found["results"]] == [doc_id], (mode, doc_id, found)
        assert c.delete("/collections/notes").status_code == 204
        assert ids_keys(redis_cluster, key_prefix) == []
        nodes = [redis_cluster.node(port) for port in redis_cluster.live()]
        # every part's documents, id set and change log, on every primary and (once replicated) replica
        until(lambda: all(next(node.scan_iter(match="*notes*"), None) is None for node in nodes))
    finally:
        stop_server(proc)
    assert "unhandled error" not in server_log(proc)
