"""What a search returns, document by document: each hit with its exact cosine, the passage that matched and what
ranked it; and how one hit's cosine is read (the dense list's, else its stored vectors')."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from app.index.document_vectors import DocumentVectors
from app.index.passages import stored_spans
from app.index.search_index import SearchIndex
from app.services.documents import Document
from app.store.documents import DocumentRecord


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
