"""`bench-search`'s filtered part: the synthetic index searched with filters that let 50%, 1% and 0.01% of its
documents through, each evaluated as the service evaluates it (a field index of the documents' metadata) and
searched as the service searches, against exact search over the documents the filter lets through."""

from __future__ import annotations

import time
from typing import Any

import faiss
import numpy as np
from tqdm.auto import tqdm

from app.benchmarks.streamed import StreamedBuild
from app.benchmarks.throughput import percentile
from app.index.filtered_search import Allowed
from app.index.filters import FieldIndex
from app.index.metadata_filter import parse

SHARES = {"50%": 0.5, "1%": 0.01, "0.01%": 0.0001}
K = 10


def tiers(n: int, seed: int = 0) -> tuple[FieldIndex, np.ndarray]:
    """Each document's metadata: {"tier": [the shares it falls in]} from one uniform draw per document, so a
    filter {"tier": "1%"} lets that share through (list membership); the field index of it, and the draws."""
    draw = np.random.default_rng(seed).random(n)
    fields = FieldIndex()
    for i, u in enumerate(tqdm(draw, desc="metadata", unit="doc", leave=False)):
        fields.upsert(str(i), {"tier": [name for name, share in SHARES.items() if u < share]})
    return fields, draw


def filtered_figures(built: StreamedBuild, asked: np.ndarray, *, seed: int = 0) -> list[dict[str, Any]]:
    """Per share: recall@10 against exact filtered search, and one-thread p50/p99 of the filter's evaluation and of
    the filtered search, each query as the search service makes it (the unfiltered search's p50 is the synthetic
    row's; a filter's FAISS labels are kept between queries, as the service keeps them)."""
    fields, draw = tiers(len(built.stored), seed)
    index = built.vector_index
    exact = built.exact if index.lossy else None
    threads = faiss.omp_get_max_threads()
    out = []
    for name, share in SHARES.items():
        tree = parse({"tier": name})
        rows = np.flatnonzero(draw < share)
        if not len(rows):  # too few documents for this share to hold one
            continue
        _, top = faiss.knn(asked, built.rows(rows), K, metric=faiss.METRIC_INNER_PRODUCT)
        truth = [{str(rows[j]) for j in row if j >= 0} for row in top]
        faiss.omp_set_num_threads(1)
        try:
            evaluated, searched, hits = [], [], 0
            for query, expected in zip(asked, truth, strict=True):
                start = time.perf_counter()
                version = fields.version  # as the search service reads a filter: its ids, keyed for their labels
                allowed = Allowed(fields.matching(tree, copy=False), (repr(tree), version))
                middle = time.perf_counter()
                (found,) = index.search(query[None, :], K, allowed=allowed, exact=exact)
                searched.append(time.perf_counter() - middle)
                evaluated.append(middle - start)
                hits += len(expected & {doc_id for doc_id, _ in found})
        finally:
            faiss.omp_set_num_threads(threads)
        out.append(
            {
                "filter": {"tier": name},
                "documents": len(rows),
                "recall_at_10": round(hits / sum(len(t) for t in truth), 4),
                "search_p50_ms": round(percentile(searched, 50) * 1000, 3),
                "search_p99_ms": round(percentile(searched, 99) * 1000, 3),
                "filter_p50_ms": round(percentile(evaluated, 50) * 1000, 4),
            }
        )
    return out
