"""`bench-search --hybrid-docs N`: one short query at a time through the search service, dense, lexical, hybrid and
hybrid with pseudo-relevance feedback (3 documents, weight 1), on N documents in a Redis of its own (texts made of
STS-B sentences, vectors shaped like the backbone's)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from app.benchmarks.search import cached_encode, sts_sentences
from app.benchmarks.synthetic import GaussianMixture
from app.benchmarks.throughput import percentile
from app.core.config import Settings
from app.core.stored_vectors import to_stored
from app.index.live import live
from app.offline.served_search import served_services
from app.services.search_query import SearchQuery
from app.store.documents import DocumentRecord

WRITE_BATCH = 5000
MODES = ("dense", "lexical", "hybrid", "hybrid_feedback")
ASKED: dict[str, dict[str, Any]] = {
    "dense": {"mode": "dense"},
    "lexical": {"mode": "lexical"},
    "hybrid": {"mode": "hybrid"},
    "hybrid_feedback": {"mode": "hybrid", "feedback_docs": 3, "feedback_weight": 1.0},
}


def synthetic_records(
    sentences: list[str], raw: np.ndarray, n: int, *, seed: int = 0
) -> Iterator[list[DocumentRecord]]:
    """`n` documents of three STS-B sentences each, with raw vectors sampled like the backbone's, in batches."""
    rng = np.random.default_rng(seed)
    scale = float(np.linalg.norm(raw, axis=1).mean())  # the index normalizes; Redis keeps raw-sized vectors
    mixture = GaussianMixture.fit(raw)
    for start in range(0, n, WRITE_BATCH):
        size = min(WRITE_BATCH, n - start)
        vectors = (mixture.sample(size, seed=seed + 1 + start) * scale).astype(np.float32)
        picks = rng.integers(0, len(sentences), size=(size, 3))
        stored = [to_stored(v) for v in vectors]  # (bytes, dtype) as the service keeps them: float16
        texts = [" ".join(sentences[j] for j in row) for row in picks]
        yield [
            DocumentRecord(f"d{start + i}", texts[i], "{}", data, "", dtype) for i, (data, dtype) in enumerate(stored)
        ]


def run(settings: Settings, sts_dir: Path, *, n: int, queries: int = 300, progress: bool = True) -> dict[str, Any]:
    """Latency of one short query in each mode (p50/p99, ms), build time, the lexical index's bytes per document."""
    from app.backbones import build_backbone

    sentences = sts_sentences(sts_dir)
    raw = cached_encode(build_backbone(settings), sentences, settings.data_dir / "cache")
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="bench-hybrid-", dir=settings.data_dir))
    try:
        services = served_services(settings.model_copy(update={"follow_interval": 1e6}), folder)  # one build, below
        collection_key = services.served.collection_key
        used_before = services.store.client.info("memory")["used_memory"]
        with tqdm(total=n, desc="writing documents", unit="doc", disable=not progress) as bar:
            for records in synthetic_records(sentences, raw, n):
                services.store.documents.put(collection_key, records)
                bar.update(len(records))
        # Text, metadata, vector (float16) and the change log's entries, as the service's own writes leave them
        redis_per_doc = (services.store.client.info("memory")["used_memory"] - used_before) / n
        started = time.perf_counter()
        live(services.served).rebuild(services.correction, "benchmark documents written").result()
        build_s = time.perf_counter() - started
        asked = [s for s in sentences if len(s.split()) <= 8][:queries]
        figures = {
            "n": n,
            "queries": len(asked),
            "build_s": round(build_s, 1),
            "redis_bytes_per_doc": round(redis_per_doc),
        }
        for mode in MODES:
            for q in asked[:20]:  # warm caches
                services.search.search(SearchQuery(q, 10, **ASKED[mode]))
            seconds = []
            for q in asked:
                start = time.perf_counter()
                services.search.search(SearchQuery(q, 10, **ASKED[mode]))
                seconds.append(time.perf_counter() - start)
            figures[mode] = {
                "p50_ms": round(percentile(seconds, 50) * 1000, 2),
                "p99_ms": round(percentile(seconds, 99) * 1000, 2),
            }
        figures["feedback_p50_ratio"] = round(figures["hybrid_feedback"]["p50_ms"] / figures["hybrid"]["p50_ms"], 2)
        index = services.served.current
        figures["passages"] = len(index.dense)
        lexical_bytes = index.lexical.size_bytes() if index.lexical else 0
        figures["lexical_bytes_per_doc"] = round(lexical_bytes / max(index.documents, 1), 1)
        figures["index_bytes_per_doc"] = round(index.dense.memory_bytes() / max(index.documents, 1), 1)
        figures["ranking"] = services.search.search(SearchQuery(asked[0], 10)).ranking
        services.close()
        return figures
    finally:
        shutil.rmtree(folder, ignore_errors=True)
