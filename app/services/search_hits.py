"""What a search returns, document by document: each hit with its exact cosine, the passage that matched and what
ranked it; and how one hit's cosine is read (the dense list's, else its stored vectors')."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from app.index.document_vectors import DocumentVectors
from app.index.passages import stored_spans
from app.index.ranked import RankedList
from app.index.search_index import SearchIndex
from app.services.documents import Document
from app.store.documents import DocumentRecord
from app.store.redis_store import RedisStore


@dataclass(frozen=True)
class SearchHit(Document):
    score: float = 0.0  # cosine of the best passage, in the search space
    rank_score: float = 0.0  # what ordered the results: the cosine, the BM25 score or the fused score
    lexical_score: float | None = None  # BM25, when the lexical list had it among its candidates
    passage: tuple[int, int] | None = None  # the best passage's character span, for a document of several
    # asked with `explain`: each list's rank and score, what the fused score took
    explanation: dict[str, Any] | None = None
    passage_index: int = 0  # which passage is the best (0 for a document of one)
    vector: list[float] | None = None  # asked with `include_vectors`: the best passage's, in the search space


@dataclass(frozen=True)
class SearchResult:
    """What a search found, and how: the space it ran in (with its correction), the ranking, missing shards."""

    hits: list[SearchHit]
    space: dict[str, Any]
    ranking: dict[str, Any]
    missing_shards: list[int]
    state: str = ""  # the collection's change-log position it was ranked at: what a cursor's pages were cut from


class HitReader:
    """Ranked ids made hits: their records read from Redis, each one's exact cosine and best passage."""

    def __init__(self, store: RedisStore, collection_key: str, vectors: DocumentVectors, index: SearchIndex):
        self.store, self.collection_key, self.vectors, self.index = store, collection_key, vectors, index

    def first(
        self,
        vector: np.ndarray,
        order: RankedList,
        cosines: dict[str, float],
        best: dict[str, int],
        lexical: dict[str, float],
        k: int,
        threshold: float | None,
    ) -> list[SearchHit]:
        """The first k ranked documents that exist and reach the threshold, read from Redis in runs of k (the
        ranking read deeper while some are skipped)."""
        out: list[SearchHit] = []
        start, depth = 0, k
        while True:
            ranked = order.first(depth)
            for begin in range(start, len(ranked), k):
                run = ranked[begin : begin + k]
                ids = [doc_id for doc_id, _ in run]
                records = self.store.documents.get(self.collection_key, ids, replica_ok=True)
                for (doc_id, rank_score), record in zip(run, records, strict=True):
                    if record is None:
                        continue
                    cosine, n, passage = exact_cosine(self.vectors, self.index, record, vector, cosines, best)
                    if threshold is not None and cosine < threshold:
                        continue
                    metadata = json.loads(record.metadata_json)
                    hit = SearchHit(record.id, record.text, metadata, cosine, rank_score, lexical.get(doc_id), passage)
                    out.append(replace(hit, passage_index=n))
                    if len(out) == k:
                        return out
            if len(ranked) < depth:  # the ranking has ended
                return out
            start, depth = len(ranked), depth * 2


def exact_cosine(
    vectors: DocumentVectors,
    index: SearchIndex,
    record: DocumentRecord,
    vector: np.ndarray,
    cosines: dict[str, float],
    best: dict[str, int],
) -> tuple[float, int, tuple[int, int] | None]:
    """A document's cosine (its best passage's), which passage that is, and its span when it has several: the dense
    list's when it ranked the document, else computed from its stored vectors."""
    spans = stored_spans(record.passages, record.text)
    if record.id in cosines:
        n = best.get(record.id, 0)
        return float(cosines[record.id]), n, (spans[n] if len(spans) > 1 else None)
    _, rows = vectors.passage_vectors([record], index.correction)
    scores = rows @ vector
    n = int(np.argmax(scores))
    return float(scores[n]), n, (spans[n] if len(spans) > 1 else None)
