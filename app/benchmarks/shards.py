"""`bench-shards`: a collection in Redis split into Flat shards on a local Ray cluster of several node processes,
against one exact index over the same documents; then one shard's process killed and its return timed."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import faiss
import numpy as np
from tqdm.auto import tqdm

from app.benchmarks.search import K, served_vectors
from app.benchmarks.streamed import scratch_dir
from app.benchmarks.synthetic import GaussianMixture
from app.benchmarks.throughput import percentile
from app.core.config import Settings
from app.core.stored_vectors import to_stored
from app.index.builder import IndexBuilder
from app.index.search_index import dense_hits
from app.shards.deployment import ShardConfig, deploy, undeploy
from app.shards.fanout import ShardedSearch
from app.store.documents import DocumentRecord
from app.store.embedded import EmbeddedRedis
from app.store.redis_store import RedisStore

COLLECTION = "bench-shards"
PUT_BATCH = 5_000
# Exact shards, a logical CPU each (so a node holds at most its CPUs' worth); snapshots soon after opening.
SHARD_SETTINGS = {"index_factory": "Flat", "snapshot_interval": 5.0}
RETURN_TIMEOUT = 600.0  # seconds a killed shard has to come back before the run says it did not


def store_documents(store: RedisStore, mixture: GaussianMixture, n: int) -> float:
    """`n` mixture vectors stored as documents (float16, as the service stores them); returns the seconds taken."""
    started, written = time.perf_counter(), 0
    with tqdm(total=n, desc="storing documents", unit="doc", leave=False) as bar:
        for chunk in mixture.chunks(n, seed=1, chunk=PUT_BATCH):
            records = []
            for row in chunk:
                blob, dtype = to_stored(row[None, :])
                records.append(DocumentRecord(f"d{written}", f"document {written}", "{}", blob, vector_dtype=dtype))
                written += 1
            store.documents.put(COLLECTION, records)
            bar.update(len(records))
    return time.perf_counter() - started


def timed(search: Callable[[np.ndarray], Any], queries: np.ndarray) -> tuple[list[float], list[list[str]]]:
    """Each query alone: seconds and the top-10 ids."""
    seconds, found = [], []
    for q in queries:
        start = time.perf_counter()
        hits = search(q[None, :])
        seconds.append(time.perf_counter() - start)
        found.append([doc_id for doc_id, _ in hits])
    return seconds, found


def latency(seconds: list[float]) -> dict[str, Any]:
    return {"p50_ms": round(percentile(seconds, 50) * 1000, 3), "p99_ms": round(percentile(seconds, 99) * 1000, 3)}


def killed_and_back(sharded: ShardedSearch, query: np.ndarray, shard: int) -> dict[str, Any]:
    """SIGKILL one shard's process; search until it answers again: what every answer said meanwhile."""
    before = sharded.status()[shard]
    if before is None:
        raise RuntimeError(f"shard {shard} does not answer before it is killed")
    os.kill(before["pid"], signal.SIGKILL)
    killed = time.monotonic()
    answers, missing = [], set()
    while time.monotonic() - killed < RETURN_TIMEOUT:
        found = sharded.search(query, K)
        answers.append(found.partial)
        missing.update(found.missing)
        if not found.partial and len(answers) > 1:
            break
        time.sleep(0.25)
    after = sharded.status()[shard]
    return {
        "shard": shard,
        "killed_pid": before["pid"],
        "restarted_pid": after["pid"] if after else None,
        "seconds_until_whole": round(time.monotonic() - killed, 1),
        "searches_meanwhile": len(answers),
        "partial_answers": sum(answers),
        "missing_named": sorted(missing),
        "reopened_from": after["opened"] if after else None,
    }


def run(settings: Settings, sts_dir: Path, *, n: int, shards: int, nodes: int, queries: int) -> dict[str, Any]:
    """Store `n` documents, open them as `shards` Flat shards on `nodes` Ray nodes and as one exact index; compare
    their top-10 on `queries` queries and time both; kill a shard and time its return."""
    import ray
    from ray import serve
    from ray.cluster_utils import Cluster

    corrected, _ = served_vectors(settings, sts_dir)
    mixture = GaussianMixture.fit(corrected)
    asked = mixture.sample(queries, seed=2)
    dim = mixture.dim
    with scratch_dir(settings.data_dir / "bench") as folder:
        redis = EmbeddedRedis(Path(folder) / "redis")
        url = redis.start()
        store = RedisStore.from_url(url, prefix=settings.key_prefix)  # the prefix the shards read
        cluster = None
        try:
            store_s = store_documents(store, mixture, n)
            started = time.perf_counter()
            whole = IndexBuilder(store, COLLECTION, dim, factory="Flat").build(None, progress=True)
            whole_s = time.perf_counter() - started

            cpus = -(-shards // nodes)  # each node room for its share of the shards, no more
            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": cpus})
            for _ in range(nodes - 1):
                cluster.add_node(num_cpus=cpus)
            ray.init(address=cluster.address, log_to_driver=False)
            config = ShardConfig.of(
                settings.model_copy(update=SHARD_SETTINGS | {"data_dir": Path(folder), "ray_address": cluster.address}),
                COLLECTION,
                dim,
                "synthetic",
                None,
                url,
            )
            started = time.perf_counter()
            sharded = ShardedSearch(deploy(config, COLLECTION, shards))
            shards_s = time.perf_counter() - started
            placed = [s for s in sharded.status() if s is not None]
            if len(placed) != shards:
                raise RuntimeError(f"{shards - len(placed)} of {shards} shards do not answer once deployed")

            threads = faiss.omp_get_max_threads()
            faiss.omp_set_num_threads(1)
            try:
                single_s, single = timed(lambda q: dense_hits(whole, q, K, None)[0], asked)
            finally:
                faiss.omp_set_num_threads(threads)
            sharded_s, fanned = timed(lambda q: sharded.search(q, K).hits, asked)
            same = sum(a == b for a, b in zip(single, fanned, strict=True))
            time.sleep(config.snapshot_interval + 2 * config.follow_interval)  # every shard has its snapshot
            kill = killed_and_back(sharded, asked[:1], shards // 2)
            after = sharded.status()
            return {
                "n": n,
                "dim": dim,
                "shards": shards,
                "nodes": len(ray.nodes()),
                "shard_nodes": len({s["node"] for s in placed}),
                "documents_per_shard": [s["documents"] for s in placed],
                "store_s": round(store_s, 1),
                "single_build_s": round(whole_s, 1),
                "shards_open_s": round(shards_s, 1),
                "queries": queries,
                "same_top10": same,
                "same_top10_share": round(same / queries, 4),
                "single": latency(single_s),
                "sharded": latency(sharded_s),
                "kill": kill,
                "documents_after": sum(s["documents"] for s in after if s),
                "stored": store.documents.count(COLLECTION),
            }
        finally:
            if cluster is not None:
                undeploy(COLLECTION)
                serve.shutdown()
                ray.shutdown()
                cluster.shutdown()
            store.close()
            redis.stop()
