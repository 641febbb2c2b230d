"""Search: the dense index (passages, a document scored by its best), the lexical one (BM25), or both fused;
documents come back with their exact cosine and the passage that matched, their texts from Redis."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

import numpy as np

from app.core.config import Settings
from app.core.errors import InvalidInput
from app.correction.pipeline import corrected
from app.index.filters import FilterError
from app.index.fusion import CANDIDATES, Ranking, best_passages, fuse
from app.index.live import ServedSpace
from app.index.passages import stored_spans
from app.index.space import SearchSpace
from app.services.documents import Document
from app.services.embedding import EmbeddingService
from app.store.redis_store import DocumentRecord, RedisStore

RANKING = "ranking"  # where an artifact's `extra.search` keeps the ranking its judgments chose


@dataclass(frozen=True)
class SearchHit(Document):
    score: float = 0.0  # cosine of the best passage, in the search space
    rank_score: float = 0.0  # what ordered the results: the cosine, the BM25 score or the fused score
    lexical_score: float | None = None  # BM25, when the lexical list had it among its candidates
    passage: tuple[int, int] | None = None  # the best passage's character span, for a document of several


def ranking_for(settings: Settings, space: SearchSpace, mode: str | None = None) -> Ranking:
    """The request's mode, else the settings' (CE_SEARCH_MODE, a collection's), else what the correction's
    judgments chose, else the documented rule."""
    tuned = space.correction.artifact.extra.get("search", {}).get(RANKING) if space.correction else None
    ranking = Ranking(**tuned) if tuned else Ranking()
    if settings.search_mode or settings.fusion or settings.lexical_weight is not None:
        ranking = replace(ranking, mode=settings.search_mode or ranking.mode, fusion=settings.fusion or ranking.fusion,
                          lexical_weight=ranking.lexical_weight if settings.lexical_weight is None
                          else settings.lexical_weight, chosen_by="settings")  # fmt: skip
    if mode is not None:
        ranking = replace(ranking, mode=mode, chosen_by="request")
    return ranking


class SearchService:
    """Top-k documents in one space per query, so its correction, its indexes and its ranking agree."""

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
        self,
        query: str,
        k: int = 10,
        *,
        where: dict | None = None,
        score_threshold: float | None = None,
        mode: str | None = None,
    ) -> tuple[list[SearchHit], dict]:
        """Top-k documents, optionally only those whose metadata matches `where` and whose cosine reaches
        `score_threshold`; with the description of the space and the ranking that found them."""
        self._check(query, k, score_threshold)
        space = self._served.space  # one space for the whole query: its correction and its indexes agree
        try:
            allowed = space.fields.matching(where) if where is not None else None
        except FilterError as exc:
            raise InvalidInput(str(exc)) from None
        ranking = ranking_for(self.settings, space, mode)
        depth = k if ranking.mode == "dense" and score_threshold is None else max(k, CANDIDATES)
        vector, dense, best, lexical = self.candidates(space, query, ranking.mode, depth, allowed)
        ranked = fuse(dense, lexical, ranking)
        hits = self._hits(space, vector[0], ranked, dict(dense), best, dict(lexical), k, score_threshold)
        return hits, {**space.describe_search(), "ranking": ranking.describe()}

    def candidates(self, space: SearchSpace, query: str, mode: str, depth: int, allowed=None):
        """The query's vector, the dense list (and each document's best passage) and the lexical list that `mode`
        fuses: what `fit --tune-qrels` fuses every way, so tuning and serving cannot drift apart."""
        vector = corrected(self._embedding.encode_raw, space.search_correction, [query])
        dense, best = dense_hits(space, vector, depth, allowed) if mode != "lexical" else ([], {})
        lexical = []
        if mode != "dense" and space.lexical is not None:
            lexical = space.lexical.search(query, depth, allowed=allowed)
        return vector, dense, best, lexical

    def _hits(self, space, query, ranked, cosines, best, lexical, k, threshold) -> list[SearchHit]:
        """The first k ranked documents that exist and reach the threshold, read from Redis in runs of k."""
        out: list[SearchHit] = []
        for start in range(0, len(ranked), k):
            run = ranked[start : start + k]
            records = self.store.get_documents(self.space_id, [doc_id for doc_id, _ in run])
            for (doc_id, rank_score), record in zip(run, records, strict=True):
                if record is None:
                    continue
                cosine, passage = exact_cosine(self._served.keeper, space, record, query, cosines, best)
                if threshold is not None and cosine < threshold:
                    continue
                out.append(SearchHit(record.id, record.text, json.loads(record.metadata_json), cosine, rank_score,
                                     lexical.get(doc_id), passage))  # fmt: skip
                if len(out) == k:
                    return out
        return out


def dense_hits(space: SearchSpace, vector: np.ndarray, depth: int, allowed) -> tuple[list, dict[str, int]]:
    """The top `depth` documents by their best passage's cosine, and which passage that was; passages are
    searched deeper until `depth` distinct documents are found or the index has no more."""
    keys = space.keys_of(allowed) if allowed is not None and space.passages else allowed
    size, want = len(space.index), depth
    while True:
        (hits,) = space.index.search(vector, want, allowed=keys)
        docs, best = best_passages(hits)
        if len(docs) >= depth or len(hits) < want or want >= size:
            return docs[:depth], best
        want = min(want * 4, size)


def exact_cosine(keeper, space: SearchSpace, record: DocumentRecord, query: np.ndarray, cosines, best):
    """A document's cosine (its best passage's) and that passage's span when it has several: the dense list's
    when it ranked the document, else computed from its stored vectors."""
    spans = stored_spans(record.passages, record.text)
    if record.id in cosines:
        n = best.get(record.id, 0)
        return float(cosines[record.id]), (spans[n] if len(spans) > 1 else None)
    _, vectors = keeper.passage_vectors([record], space.correction)
    scores = vectors @ query
    n = int(np.argmax(scores))
    return float(scores[n]), (spans[n] if len(spans) > 1 else None)
