"""Search: a query corrected like the documents, its top-k from the served index, their texts from Redis."""

from __future__ import annotations

import json
from dataclasses import dataclass

from app.core.config import Settings
from app.core.errors import InvalidInput
from app.correction.pipeline import corrected
from app.index.filters import FilterError
from app.index.live import ServedSpace
from app.services.documents import Document
from app.services.embedding import EmbeddingService
from app.store.redis_store import RedisStore


@dataclass(frozen=True)
class SearchHit(Document):
    score: float = 0.0


class SearchService:
    """Top-k documents by corrected cosine, in one space per query so its correction and its index agree."""

    def __init__(self, settings: Settings, store: RedisStore, served: ServedSpace, embedding: EmbeddingService):
        self.settings = settings
        self.store = store
        self._served = served
        self._embedding = embedding
        self.space_id = served.space_id

    def _check(self, query: str, k: int, score_threshold: float | None) -> None:
        if not 1 <= k <= self.settings.max_k:
            raise InvalidInput(f"k must be within [1, {self.settings.max_k}], got {k}")
        if not query.strip():
            raise InvalidInput("q must not be empty or whitespace only")
        if score_threshold is not None and not -1.0 <= score_threshold <= 1.0:
            raise InvalidInput(f"score_threshold is a cosine: within [-1, 1], got {score_threshold}")
        self._embedding.check_texts([query], "q")

    def search(
        self, query: str, k: int = 10, *, where: dict | None = None, score_threshold: float | None = None
    ) -> tuple[list[SearchHit], dict]:
        """Top-k documents by corrected cosine, optionally only those whose metadata matches `where`; with the
        description of the space they were found in."""
        self._check(query, k, score_threshold)
        space = self._served.space  # one space for the whole query: its correction and its index agree
        try:
            allowed = space.fields.matching(where) if where is not None else None
        except FilterError as exc:
            raise InvalidInput(str(exc)) from None
        vector = corrected(self._embedding.encode_raw, space.search_correction, [query])
        (hits,) = space.index.search(vector, k, allowed=allowed)
        if score_threshold is not None:
            hits = [(doc_id, score) for doc_id, score in hits if score >= score_threshold]
        docs = self.store.get_documents(self.space_id, [doc_id for doc_id, _ in hits]) if hits else []
        results = [
            SearchHit(doc.id, doc.text, json.loads(doc.metadata_json), score)
            for (_, score), doc in zip(hits, docs, strict=True)
            if doc is not None
        ]
        return results, space.describe_search()
