"""`bench-cluster`: the same documents sent through the API to a server on a local Redis Cluster (3 primaries, a
replica each) whose collection is kept in parts searched by shards on a local Ray cluster, and to a single-process
server; their top-10 compared mode by mode, ingestion rates and search latencies side by side."""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from app.benchmarks.http import Connection, free_port, start_service, stop_service
from app.benchmarks.ranking_match import same_ranking
from app.benchmarks.throughput import percentile
from app.core.config import Settings
from app.store.local_cluster import LocalRedisCluster

MODES = ("dense", "lexical", "hybrid")
BATCH = 256  # documents a request (CE_MAX_TEXTS)
COLLECTION = "bench"


def words(sts_dir: Path) -> list[str]:
    """STS-B's words, as often as they occur: the texts' vocabulary (Zipf-like, as real text is)."""
    text = (sts_dir / "sts-train.csv").read_text(encoding="utf-8", errors="replace").lower()
    return [w for w in "".join(ch if ch.isalpha() else " " for ch in text).split() if len(w) > 1]


def text_of(vocabulary: list[str], i: int) -> str:
    rng = random.Random(i)
    return " ".join(rng.choices(vocabulary, k=rng.randint(6, 24)))


def ingest(url: str, vocabulary: list[str], n: int, desc: str, clients: int) -> float:
    """Every document through POST /collections/bench/documents, a batch a request, by `clients` at once (so each
    server's encoder rounds mix the batches as its own timing does), sent again on a 503; returns documents a second."""
    started = time.perf_counter()

    def post(start: int) -> int:
        conn = Connection(url)
        docs = [{"id": f"d{i}", "text": text_of(vocabulary, i)} for i in range(start, min(n, start + BATCH))]
        while (status := conn.post_json(f"/collections/{COLLECTION}/documents", {"documents": docs})) != 201:
            if status not in (0, 503):
                raise RuntimeError(f"ingestion refused with {status}")
            time.sleep(0.5)
        conn.close()
        return len(docs)

    with tqdm(total=n, desc=f"ingesting ({desc})", unit="doc", leave=False) as bar, ThreadPoolExecutor(clients) as pool:
        for sent in pool.map(post, range(0, n, BATCH)):
            bar.update(sent)
    return n / (time.perf_counter() - started)


def search(conn: Connection, query: str, mode: str) -> tuple[float, list[tuple[str, float]], bool]:
    body = {"q": query, "k": 10, "mode": mode}
    started = time.perf_counter()
    status, answer = conn.answer("POST", f"/collections/{COLLECTION}/search", body)
    seconds = time.perf_counter() - started
    if status != 200:
        raise RuntimeError(f"search answered {status}: {answer[:300]!r}")
    found = json.loads(answer)
    return seconds, [(h["id"], h["rank_score"]) for h in found["results"]], found["partial"]


def run(
    settings: Settings, sts_dir: Path, *, n: int, queries: int, nodes: int, clients: int = 4, shards: int = 3
) -> dict[str, Any]:
    """Both servers started, filled and queried; what they measured."""
    from ray.cluster_utils import Cluster

    vocabulary = words(sts_dir)
    scratch = Path(tempfile.mkdtemp(prefix="ce-bench-cluster-"))
    redis_cluster, ray_nodes, procs = LocalRedisCluster(scratch / "redis"), None, []
    try:
        redis_cluster.start()
        ray_nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
        for _ in range(nodes - 1):
            ray_nodes.add_node(num_cpus=2)
        base = {k: v for k, v in os.environ.items() if not k.startswith("CE_") and k != "REDIS_URL"}
        base |= {"CE_BACKBONE": settings.backbone, "CE_FOLLOW_INTERVAL": "0.5", "CE_SHARD_TIMEOUT": "30"}
        clustered = {"CE_REDIS_URL": redis_cluster.url, "RAY_ADDRESS": ray_nodes.address}
        urls = {}
        for name, extra, parts in (("single", {}, 0), ("cluster", clustered, shards)):
            port = free_port()
            env = {**base, **extra, "CE_DATA_DIR": str(scratch / name), "CE_PORT": str(port)}
            urls[name] = f"http://127.0.0.1:{port}"
            log = (scratch / f"{name}.log").open("w+b")
            procs.append(start_service(env, urls[name], log, timeout=300))
            spec = {"name": COLLECTION, "shards": parts, "index_factory": "Flat"}  # exact both sides: any difference
            created = Connection(urls[name]).post_json("/collections", spec)  # is the sharding's
            if created != 201:
                raise RuntimeError(f"{name}: creating the collection answered {created}")
        rates = {name: round(ingest(url, vocabulary, n, name, clients), 1) for name, url in urls.items()}
        caught_up = wait_for_last(urls["cluster"], vocabulary, n)
        return {
            "n": n,
            "shards": shards,
            "ray_nodes": nodes,
            "ingest_clients": clients,
            "redis": "3 primaries + 3 replicas",
            **compare(urls, vocabulary, queries),
            "ingest_docs_per_s": rates,
            "shards_caught_up_s": caught_up,
            "backbone": settings.backbone,
        }
    finally:
        for proc in procs:
            stop_service(proc)
        if ray_nodes is not None:
            ray_nodes.shutdown()
        redis_cluster.stop()
        shutil.rmtree(scratch, ignore_errors=True)


def wait_for_last(url: str, vocabulary: list[str], n: int, timeout: float = 1800.0) -> float:
    """Seconds until the shards find the last document written (they follow their parts' change logs)."""
    conn, started = Connection(url), time.monotonic()
    last = text_of(vocabulary, n - 1)
    while time.monotonic() - started < timeout:
        _, found, partial = search(conn, last, "dense")
        if found[:1] and found[0][0] == f"d{n - 1}" and not partial:
            return round(time.monotonic() - started, 1)
        time.sleep(1.0)
    raise RuntimeError(f"the shards did not catch up within {timeout:.0f} s")


def compare(urls: dict[str, str], vocabulary: list[str], queries: int) -> dict[str, Any]:
    """Each mode's queries on both servers: how many top-10 agree (scores to 1e-5, and to 1e-4: FAISS's SIMD kernels
    round a cosine's last bit by the vector's place in its index, and calibrated fusion's scaling of a narrow range
    of cosines magnifies it), the lexical scores' largest difference, and p50/p99 of each."""
    rng = random.Random(7)
    asked = [" ".join(rng.choices(vocabulary, k=rng.randint(2, 6))) for _ in range(queries)]
    conns = {name: Connection(url) for name, url in urls.items()}
    out: dict[str, Any] = {
        "queries": queries,
        "same_top10": {},
        "same_top10_within_1e-4": {},
        "latency_ms": {},
        "partial_answers": 0,
    }
    largest = 0.0
    for mode in MODES:
        seconds: dict[str, list[float]] = {name: [] for name in urls}
        same, near = 0, 0
        for q in tqdm(asked, desc=f"queries ({mode})", leave=False):
            found = {}
            for name, conn in conns.items():
                took, found[name], partial = search(conn, q, mode)
                seconds[name].append(took)
                out["partial_answers"] += partial
            same += same_ranking(found["cluster"], found["single"])
            near += same_ranking(found["cluster"], found["single"], rel=1e-4)
            if mode == "lexical":
                for (_, a), (_, b) in zip(found["cluster"], found["single"], strict=False):
                    largest = max(largest, abs(a - b) / max(abs(b), 1e-9))
        out["same_top10"][mode] = same
        out["same_top10_within_1e-4"][mode] = near
        out["latency_ms"][mode] = {
            name: {"p50": round(percentile(s, 50) * 1000, 2), "p99": round(percentile(s, 99) * 1000, 2)}
            for name, s in seconds.items()
        }
    out["lexical_largest_relative_difference"] = largest
    return out
