"""A collection's shards on a local Ray cluster of three node processes: one answer as the whole index gives, the
change log followed, and a killed shard named in every answer until Serve has restarted it, nothing lost."""

import os
import signal
import time

import numpy as np
import pytest

from app.index.builder import IndexBuilder
from app.index.search_index import dense_hits
from app.shards.deployment import ShardConfig, deploy, undeploy
from app.shards.fanout import ShardedSearch
from tests.index.test_shards import DIM, KEY, put

ray = pytest.importorskip("ray")  # the `ray` extra: `make install` has it, a bare install of the service does not


@pytest.fixture(scope="module")
def cluster():
    from ray import serve
    from ray.cluster_utils import Cluster

    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
    for _ in range(2):
        nodes.add_node(num_cpus=2)
    ray.init(address=nodes.address, log_to_driver=False)
    yield nodes
    serve.shutdown()
    ray.shutdown()
    nodes.shutdown()


def until(check, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.25)
    raise AssertionError(f"not within {timeout} s")


@pytest.mark.process
def test_four_shards_answer_as_one_index_follow_writes_and_survive_a_killed_shard(
    cluster, store, redis_url, make_settings
):
    rng = np.random.default_rng(0)
    put(store, [f"d{i}" for i in range(3_000)], rng)
    on_a_cluster = {"ray_address": cluster.address}  # each shard reserves one CPU: they spread over the nodes
    settings = make_settings(index_factory="Flat", follow_interval=0.2, snapshot_interval=1.0, **on_a_cluster)
    config = ShardConfig.of(settings, KEY, DIM, "fp", None, redis_url)
    sharded = ShardedSearch(deploy(config, "docs", 4), timeout=1.0)
    try:
        placed = sharded.status()
        assert [s["shard"] for s in placed] == [0, 1, 2, 3] and sum(s["documents"] for s in placed) == 3_000
        assert len(ray.nodes()) == 3 and len({s["node"] for s in placed}) >= 2  # two CPUs a node, one a shard

        whole = IndexBuilder(store, KEY, DIM, factory="Flat").build(None)
        queries = rng.standard_normal((30, DIM)).astype(np.float32)
        for q in queries:
            found = sharded.search(q[None, :], 10)
            assert not found.partial and [d for d, _ in found.hits] == [
                d for d, _ in dense_hits(whole, q[None], 10, None)[0]
            ]

        put(store, ["late"], np.random.default_rng(7))  # another process's write: every shard follows the log
        late = store.documents.get(KEY, ["late"])[0]
        probe = np.frombuffer(late.vector, dtype=late.vector_dtype).astype(np.float32)[None, :]
        probe /= np.linalg.norm(probe)
        assert until(lambda: sharded.search(probe, 1).hits[:1] == [("late", pytest.approx(1.0, abs=1e-3))])
        time.sleep(1.5)  # past the snapshot interval: each shard has written its own snapshot

        victim = placed[1]
        os.kill(victim["pid"], signal.SIGKILL)
        time.sleep(0.2)
        down = sharded.search(queries[:1], 10)
        assert down.partial and down.missing == [1] and len(down.hits) == 10

        until(lambda: not sharded.search(queries[:1], 10).partial)
        back = sharded.status()
        assert back[1]["pid"] != victim["pid"] and back[1]["opened"]["from"] == "snapshot"
        assert sum(s["documents"] for s in back) == 3_001
        for q in queries:
            assert [d for d, _ in sharded.search(q[None, :], 10).hits] == [
                d for d, _ in dense_hits(whole, q[None], 10, None)[0]
            ]
    finally:
        undeploy("docs")
