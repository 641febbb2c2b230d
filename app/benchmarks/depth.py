"""`bench-depth`: what a deep page costs. A fresh service over HTTP holds STS-B sentences as documents; each query is
asked at k = 10, 100 and 1,000 in every mode, and the p50 of each, with its ratio to k = 10 in the same run (this
machine is shared: ratios in one run say more than seconds)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from app.benchmarks.http import running_service
from app.benchmarks.throughput import percentile
from app.offline.datasets import read_corpus

DEPTHS = (10, 100, 1000)
MODES = ("dense", "lexical", "hybrid")
POST_BATCH = 256


def run(sts_dir: Path, documents: int, queries: int, env: dict[str, str], reuse: list[Path]) -> dict[str, Any]:
    """`measure` on a fresh service started with `env` (its own embedded Redis)."""
    with running_service(env, reuse=reuse) as (url, _pid):
        return measure(url, sts_dir, documents, queries)


def measure(url: str, sts_dir: Path, documents: int, queries: int) -> dict[str, Any]:
    """p50 milliseconds of POST /search per (mode, k), over `queries` held-out sentences, on `documents` others."""
    sentences = list(dict.fromkeys(read_corpus(sts_dir / "sts-train.csv")))
    docs, asked = sentences[:documents], sentences[documents : documents + queries]
    figures: dict[str, Any] = {"documents": len(docs), "queries": len(asked), "p50_ms": {}, "vs_k10": {}}
    with httpx.Client(base_url=url, timeout=300) as client:
        for start in range(0, len(docs), POST_BATCH):
            batch = [{"id": f"s{start + i}", "text": t} for i, t in enumerate(docs[start : start + POST_BATCH])]
            client.post("/documents", json={"documents": batch}).raise_for_status()
        for q in asked[:5]:  # warm: the scale of cosines is measured at the first hybrid search
            client.post("/search", json={"q": q, "k": 10}).raise_for_status()
        for mode in MODES:
            times: dict[int, list[float]] = {k: [] for k in DEPTHS}
            for q in asked:
                for k in DEPTHS:  # in turn per query, so load on the machine weighs on each k alike
                    started = time.perf_counter()
                    answer = client.post("/search", json={"q": q, "k": k, "mode": mode})
                    times[k].append((time.perf_counter() - started) * 1000)
                    answer.raise_for_status()
            p50 = {k: round(percentile(ts, 50), 2) for k, ts in times.items()}
            figures["p50_ms"][mode] = p50
            figures["vs_k10"][mode] = {k: round(p50[k] / p50[10], 2) for k in DEPTHS}
    return figures
