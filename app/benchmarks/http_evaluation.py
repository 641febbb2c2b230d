"""`eval-http`: a judged collection evaluated over HTTP as its users would meet it: the documents posted by several
clients at once (so the encoder's rounds mix their texts as traffic does), every query through POST /search, and
the figures computed from the ranked ids the service answered."""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from app.benchmarks.tuning import call, post_documents
from app.offline.retrieval import DEPTH, METRICS, JudgedCorpus, Judgments

BATCH = 64  # documents per POST /documents


def ranked_columns(
    url: str, collection: JudgedCorpus, clients: int, mode: str | None = None, depth: int = DEPTH
) -> np.ndarray:
    """Each query's ranked document columns (queries x DEPTH, -1 past the end), queries sent by `clients` at once."""
    column = {doc_id: i for i, doc_id in enumerate(collection.doc_ids)}
    depth = min(depth, len(collection.doc_ids))

    def search(query: str) -> list[int]:
        status, answer = call(url, "/search", {"q": query, "k": depth} | ({"mode": mode} if mode else {}))
        if status != 200:
            raise RuntimeError(f"POST /search: {status} {answer}")
        return [column[hit["id"]] for hit in answer["results"]]

    top = np.full((len(collection.query_texts), depth), -1, dtype=np.int64)
    with ThreadPoolExecutor(clients) as pool:
        for row, hits in enumerate(pool.map(search, collection.query_texts)):
            top[row, : len(hits)] = hits
    return top


def evaluate_over_http(
    url: str, collection: JudgedCorpus, clients: int, mode: str | None = None, *, batch: int = BATCH, depth: int = DEPTH
) -> dict[str, Any]:
    """NDCG@10, Recall@100, MRR@10 and success@1 (x100) of the service's search, and a digest of every ranking it
    gave, so that two runs can be told identical or not; `batch` and `depth` within the server's CE_MAX_TEXTS and
    CE_MAX_K; `url` the service's (its default collection) or a collection's (.../collections/NAME)."""
    blank = post_documents(url, collection, clients, batch)
    top = ranked_columns(url, collection, clients, mode, depth)
    scores = Judgments.of(collection).per_query(top)
    return {
        **{metric: round(100 * float(scores[metric].mean()), 2) for metric in METRICS},
        "rankings_sha256": hashlib.sha256(top.tobytes()).hexdigest()[:16],
        "n_queries": len(collection.query_ids),
        "n_docs": len(collection.doc_ids),
        "blank_documents_left_out": blank,
        "clients": clients,
    }
