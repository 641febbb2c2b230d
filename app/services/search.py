"""Search: the dense index (passages, a document scored by its best), the lexical one (BM25), or both fused;
documents come back with their exact cosine and the passage that matched, their texts from Redis."""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
from starlette.concurrency import run_in_threadpool

from app.core.config import Settings
from app.core.errors import InvalidInput, NotFound
from app.correction.pipeline import project
from app.index.dense_lists import DenseList, DenseSource, LocalDense, Scope
from app.index.feedback import rocchio
from app.index.filtered_search import Allowed
from app.index.fusion import Candidates, Ranking, explanations, fuse
from app.index.lexical_lists import LexicalList, LexicalSource, LocalLexical
from app.index.live import ServedIndex
from app.index.metadata_filter import Filter
from app.index.mmr import mmr_order
from app.index.passages import passage_key
from app.index.ranked import TAIL_SCORE, RankedList
from app.index.search_index import SearchIndex
from app.services.embedding import EmbeddingService
from app.services.on_collection import OnCollection
from app.services.ranking_choice import ranking_for
from app.services.search_hits import HitReader, SearchHit, SearchResult
from app.services.search_query import SearchQuery, max_search_depth
from app.store.redis_store import RedisStore


class SearchService(OnCollection):
    """Top-k documents in one index per query, so its correction, its indexes and its ranking agree."""

    def __init__(
        self,
        settings: Settings,
        store: RedisStore,
        served: ServedIndex,
        embedding: EmbeddingService,
        dense: DenseSource | None = None,
        lexical: LexicalSource | None = None,
    ):
        super().__init__(store, served, embedding)
        self.settings = settings
        self.dense = dense or LocalDense(served.builder.vectors)  # or the shards' (CE_SHARDS, `shards: N`)
        self.lexical = lexical or LocalLexical()  # or the shards' (`shards: N`), which filter for themselves too
        self.filtered_by_shards = lexical is not None
        self._tuned: tuple[float, dict[str, Any] | None] = (
            -float("inf"),
            None,
        )  # (read at, the ranking tuned over HTTP)

    def tuned_ranking(self) -> dict[str, Any] | None:
        """The ranking `tune --publish` chose for this collection, read from Redis at most once a follow step: every
        replica ranks with it within CE_FOLLOW_INTERVAL."""
        read_at, ranking = self._tuned
        if time.monotonic() - read_at > self.settings.follow_interval:
            record = self.store.judgments.published_ranking(self.collection_key)
            ranking = record["ranking"] if record else None
            self._tuned = (time.monotonic(), ranking)
        return ranking

    def served_ranking(self, index: SearchIndex, *, like: bool = False) -> Ranking:
        """How a request that names no ranking is ranked now (`like`: one like a stored document): what /info and the
        page show."""
        return ranking_for(self.settings, index.correction, self.tuned_ranking(), like=like)

    def _check(self, query: SearchQuery, index: SearchIndex) -> None:
        if not 1 <= query.k <= self.settings.max_k:
            raise InvalidInput(f"k must be within [1, {self.settings.max_k}] (CE_MAX_K), got {query.k}")
        if query.offset + query.k > (limit := max_search_depth(self.settings.max_k)):
            depth = query.offset + query.k
            raise InvalidInput(f"offset + k must be at most {limit} (10 times CE_MAX_K), got {depth}")
        if query.text is None and query.vector is None and query.like is None:
            raise InvalidInput("send q (a text), vector, both, or like (a stored document's id)")
        if query.like is not None and query.vector is not None:
            raise InvalidInput("like and vector both name the dense query: send one")
        if query.text is None:
            if query.like is None and (query.mode or "dense") != "dense":
                raise InvalidInput(f"a search by vector alone ranks dense only: send q too for {query.mode} mode")
        else:
            if not query.text.strip():
                raise InvalidInput("q must not be empty or whitespace only")
            self._embedding.check_texts([query.text], "q")
        if query.score_threshold is not None and not -1.0 <= query.score_threshold <= 1.0:
            raise InvalidInput(f"score_threshold is a cosine: within [-1, 1], got {query.score_threshold}")
        if query.vector is not None:
            dim = index.dense.dim if query.vector_space == "search" else self._embedding.backbone.dim
            if query.vector.shape != (1, dim):
                raise InvalidInput(f"vector: {dim} numbers in the {query.vector_space} space, got {query.vector.size}")
            if not np.isfinite(query.vector).all() or not np.any(query.vector):
                raise InvalidInput("vector: finite numbers, not all zero")

    def search(self, query: SearchQuery) -> SearchResult:
        """Top-k documents (see `rank`), the query encoded on this thread: for the command line and benchmarks."""
        index, query = self._prepared(query)
        if query.vector is not None:
            return self.rank(index, query, self.mapped_vector(index, query))
        return self.rank(index, query, self._embedding.query_in_space([query.words], index.search_correction))

    async def search_async(self, query: SearchQuery) -> SearchResult:
        """Top-k documents (see `rank`): the query encoded like /embed's texts, the indexes read off the loop."""
        index, query = await run_in_threadpool(self._prepared, query) if query.like else self._prepared(query)
        if query.vector is not None:
            vector = self.mapped_vector(index, query)
        else:
            vector = await self._embedding.query_in_space_async([query.words], index.search_correction)
        return await run_in_threadpool(self.rank, index, query, vector)

    def _prepared(self, query: SearchQuery) -> tuple[SearchIndex, SearchQuery]:
        """The request checked, and the one index the whole query uses (its correction and its indexes agree); a
        query `like` a stored document takes that document's text and vector, read in that index's space."""
        index = self._served.current
        self._check(query, index)  # as sent: a stored document's text was checked when it was added
        return index, query if query.like is None else self.liked(index, query)

    def liked(self, index: SearchIndex, query: SearchQuery) -> SearchQuery:
        """More like a stored document (Elasticsearch's more_like_this): the mean of its passages' vectors is the dense
        query and its whole text the lexical one (unless q is sent: as with `vector`, q's text is then the lexical
        query); `rank` leaves the document out."""
        (record,) = self.store.documents.get(self.collection_key, [query.like or ""], replica_ok=True)
        if record is None:
            raise NotFound(f"no document with id {query.like!r} to search like")
        _, rows = self._served.builder.vectors.passage_vectors([record], index.correction)
        text = record.text if query.text is None else query.text
        return replace(query, text=text, vector=rows.mean(axis=0), vector_space="search")

    def mapped_vector(self, index: SearchIndex, query: SearchQuery) -> np.ndarray:
        """The query's vector in the search space: as sent (made unit), or a raw one mapped by the correction."""
        correction, vector = index.search_correction, query.vector
        if vector is None:
            raise InvalidInput("send a vector to search by vector")
        if query.vector_space == "search":
            return project(vector, None)
        if correction is not None and correction.token_weights is not None:
            raise InvalidInput("this collection's search space pools with SIF weights: send its own vectors")
        return project(vector, correction)

    def rank(self, index: SearchIndex, query: SearchQuery, vector: np.ndarray) -> SearchResult:
        """The query's page of documents in `index`, found with `vector` (in its search space): those the filter
        selects and whose cosine reaches the threshold, ranked as the query asks (else as the collection does),
        re-ordered by MMR if asked; with the description of the space and the ranking that found them, and with
        `explain` each hit's ranks and scores in both lists. Every page is cut from one ranking (index/ranked)."""
        allowed = None
        if query.filter is not None and not self.filtered_by_shards:  # the shards match it themselves
            version = index.fields.version  # read first: ids read after a write are never kept under an older one
            key = (repr(query.filter), version)  # repr: False and 0 are equal, and hash alike, as Python values
            allowed = Allowed(index.fields.matching(query.filter, copy=False), key)
        asked = query.asked() | ({"mode": "dense"} if query.text is None else {})
        ranking = ranking_for(
            self.settings, index.correction, self.tuned_ranking(), like=query.like is not None, **asked
        )
        wanted, fused = query.wanted, ranking.mode == "hybrid"
        # hybrid fuses a window fixed per query; one list is read as deep as the page (and feedback) needs
        depth = ranking.candidates if fused else max(wanted, ranking.feedback_docs)
        found, dense = self.candidates(
            index, query.text or "", vector, ranking.mode, depth, allowed, query.filter, query.like
        )
        best = dense.best
        ranked = fuse(found, ranking)  # a document searched like is not among the candidates
        cosines, bm25 = dict(found.dense), dict(found.lexical)  # the query's own: what `score` reports
        described = ranking.describe()
        scope, moved, read = Scope(allowed, query.filter), vector, dense.hits
        if ranking.feedback and dense.stored is not None:  # the shards keep their vectors: no feedback there
            top = described["feedback"]["from"] = ranking.feedback_from(ranked)
            moved = self.moved(index, vector, top, dense, ranking)[None, :]
            found, read = self.searched_again(index, moved, found, depth, scope, query.like)
            ranked = fuse(found, ranking)
        if ranking.mode == "lexical":  # read again from the top: `found` left out the document searched like
            source, read = partial(self._lexical_hits, index, query.text or "", scope), []
        else:
            source = partial(self._dense_hits, index, moved, scope)
        head, tail = (ranked, TAIL_SCORE) if fused else ((), None)
        order = RankedList(source, read, len(read) and depth + (query.like is not None), head, query.like, tail)
        reader = HitReader(self.store, self.collection_key, self._served.builder.vectors, index)
        hits = reader.first(vector[0], order, cosines, best, bm25, wanted, query.score_threshold)
        hits = self._diversified(index, query, hits)[query.offset : query.offset + query.k]
        if query.explain:
            told = explanations(found, ranking, [h.id for h in hits])
            hits = [replace(h, explanation=told[h.id]) for h in hits]
            if fused:
                described["confidence"] = {"dense": found.dense_confidence, "lexical": found.lexical_confidence}
        if query.diversity is not None:
            described["mmr"] = {"lambda": query.diversity.weight, "fetch_k": query.diversity.fetch}
        return SearchResult(hits, index.describe_search(), described, dense.missing, index.state)

    def _dense_hits(self, index: SearchIndex, vector: np.ndarray, scope: Scope, depth: int) -> list[tuple[str, float]]:
        return self.dense.search(index, vector, depth, scope).hits

    def _lexical_hits(self, index: SearchIndex, text: str, scope: Scope, depth: int) -> list[tuple[str, float]]:
        return self.lexical.search(index, text, depth, scope).hits

    def _diversified(self, index: SearchIndex, query: SearchQuery, hits: list[SearchHit]) -> list[SearchHit]:
        """The hits re-ordered by MMR when asked, and given their best passage's vector when asked."""
        if not hits or (query.diversity is None and not query.include_vectors):
            return hits
        stored = self._served.builder.vectors.exact_vectors(index.correction, index.dense.dim)
        rows = stored([passage_key(h.id, h.passage_index) for h in hits])
        if query.diversity is not None:  # the first `fetch` re-ordered, the rest as ranked: the same on every page
            pool = min(query.diversity.fetch, len(hits))
            relevance = np.array([h.score for h in hits[:pool]])
            order = [*mmr_order(relevance, rows[:pool], query.diversity.weight, pool), *range(pool, len(hits))]
            hits, rows = [hits[i] for i in order], rows[order]
        if query.include_vectors:
            hits = [replace(h, vector=[round(float(x), 7) for x in row]) for h, row in zip(hits, rows, strict=True)]
        return hits

    def feed_back(
        self,
        index: SearchIndex,
        vector: np.ndarray,
        top: list[str],
        found: Candidates,
        dense: DenseList,
        ranking: Ranking,
        depth: int,
        allowed: Collection[str] | None,
        leave_out: str | None = None,
        *,
        documents: bool = False,
    ) -> Candidates:
        """The dense list searched again with the query moved toward the `top` documents' best passages (Rocchio;
        with `documents`, toward each one's mean passage: the form docs/search.md compares it with); the lexical
        list and the dense confidence stay the query's own, and a document searched like (`leave_out`) stays out."""
        if dense.stored is None:  # the shards keep their vectors: nothing to move the query toward
            return found
        moved = self.moved(index, vector, top, dense, ranking, documents=documents)
        return self.searched_again(index, moved[None, :], found, depth, Scope(allowed), leave_out)[0]

    def searched_again(
        self, index: SearchIndex, moved: np.ndarray, found: Candidates, depth: int, scope: Scope, leave_out: str | None
    ) -> tuple[Candidates, list[tuple[str, float]]]:
        """`found` with its dense list searched again for the moved query (a document searched like left out), and
        that list as the source gave it: what the ranking reads deeper from."""
        again = self.dense.search(index, moved, depth + (leave_out is not None), scope).hits
        return replace(found, dense=[hit for hit in again if hit[0] != leave_out][:depth]), again

    def moved(
        self,
        index: SearchIndex,
        vector: np.ndarray,
        top: list[str],
        dense: DenseList,
        ranking: Ranking,
        *,
        documents: bool = False,
    ) -> np.ndarray:
        """The query vector moved toward the `top` documents' best passages (with `documents`, their mean ones)."""
        if dense.stored is None:
            raise ValueError("feedback needs the stored vectors: the shards keep theirs")
        if documents:
            means = [np.nanmean(dense.stored(index.keys_of([doc_id])), axis=0) for doc_id in top]
            rows = np.array([m / np.linalg.norm(m) for m in means]).reshape(len(top), -1)
        else:
            rows = dense.stored([passage_key(doc_id, dense.best.get(doc_id, 0)) for doc_id in top])
        return rocchio(vector[0], rows[~np.isnan(rows).any(axis=1)], ranking.feedback_weight)

    def candidates(
        self,
        index: SearchIndex,
        text: str,
        vector: np.ndarray,
        mode: str,
        depth: int,
        allowed: Collection[str] | None,
        where: Filter | None = None,
        leave_out: str | None = None,
    ) -> tuple[Candidates, DenseList]:
        """The lists `mode` fuses, with what calibrated fusion weighs them by, and the dense list as its source gave
        it (each document's best passage, missing shards): what `fit --tune-qrels` fuses every way, so tuning and
        serving cannot drift apart. Where the source has the stored vectors, the collection's scale of cosines is
        measured (the source's own scale: its index's, or its shards' together). `leave_out` (a query `like` it)
        leaves both lists before anything is weighed: the document would read as its own best match."""
        scope, depth = Scope(allowed, where), depth + (leave_out is not None)
        dense = self.dense.search(index, vector, depth, scope) if mode != "lexical" else DenseList()
        lexical = self.lexical.search(index, text, depth, scope) if mode != "dense" else LexicalList()
        found = Candidates(dense.hits, lexical.hits, coverage=lexical.coverage)
        if mode == "hybrid" and dense.hits and (scale := self.dense.scale(index)) is not None:
            found = replace(found, dense_confidence=scale.confidence(dense.hits[0][1]), dense_range=scale.range)
        missing = sorted({*dense.missing, *lexical.missing})  # either list's shards: the answer is partial
        return found if leave_out is None else found.without(leave_out), replace(dense, missing=missing)
