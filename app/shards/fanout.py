"""A query fanned out to every shard of a collection, their top-k merged; a shard that does not answer in time is
named in the answer (`partial`), never silently left out."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.core.errors import NotReady
from app.core.tracing import span
from app.index.dense_lists import EVERY, DenseList, Scope
from app.index.dense_scale import DenseScale, measured
from app.index.document_vectors import DocumentVectors
from app.index.global_bm25 import LexicalStatistics
from app.index.lexical_lists import LexicalList
from app.index.metadata_filter import Filter
from app.index.passages import passage_key
from app.index.search_index import SearchIndex
from app.index.shards import merged

log = logging.getLogger(__name__)
SHARD_TIMEOUT = 2.0  # seconds a query waits for the slowest shard before answering without it


@dataclass(frozen=True)
class ShardedHits:
    """The merged top documents, each one's best passage, and the shards that did not answer."""

    hits: list[tuple[str, float]]
    best: dict[str, int] = field(default_factory=dict)
    missing: list[int] = field(default_factory=list)
    held: int = 0  # documents the shards that answered hold

    @property
    def partial(self) -> bool:
        return bool(self.missing)


class ShardedSearch:
    """Every shard searched at once through its Serve handle; the answer waits for each at most `timeout` s."""

    def __init__(self, handles: list[Any], timeout: float = SHARD_TIMEOUT):
        self.handles = handles
        self.timeout = timeout

    def _ask(self, method: str, *args: Any) -> tuple[list[tuple[int, Any]], list[int]]:
        """Every shard's answer to `method(*args)`, asked at once and waited for at most `timeout` s in all, with the
        shards that did not answer."""
        asked = [getattr(handle, method).remote(*args) for handle in self.handles]
        deadline = time.monotonic() + self.timeout
        answers: list[tuple[int, Any]] = []
        missing: list[int] = []
        for number, response in enumerate(asked):
            try:
                answers.append((number, response.result(timeout_s=max(deadline - time.monotonic(), 1e-3))))
            except Exception as exc:  # a timeout, a dead replica, a shard still opening: Ray raises each its own way
                said = str(exc).splitlines()  # an exception without a message says nothing: name its type
                log.warning("shard %d did not answer: %s", number, said[0][:200] if said else type(exc).__name__)
                response.cancel()
                missing.append(number)
        return answers, missing

    def search(
        self, vector: np.ndarray, depth: int, correction_id: str | None = None, where: Filter | None = None
    ) -> ShardedHits:
        """The top `depth` documents (matching `where`) of the shards that answered, with those that did not; each
        shard answers only in `correction_id`'s space."""
        vector = np.ascontiguousarray(vector, dtype=np.float32)
        answers, missing = self._ask("search", vector, depth, correction_id, where)
        best = {doc_id: n for _, (_, passages, _) in answers for doc_id, n in passages.items()}
        hits = merged([docs for _, (docs, _, _) in answers], depth)
        held = sum(documents for _, (_, _, documents) in answers)
        return ShardedHits(hits, {doc_id: best[doc_id] for doc_id, _ in hits if doc_id in best}, missing, held)

    def neighbours(self, vectors: np.ndarray, depth: int, correction_id: str | None) -> list[list[tuple[str, float]]]:
        """Each vector's top `depth` passages over every shard (NotReady unless all answer: a scale measured on some
        shards would not be the collection's)."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        answers, missing = self._ask("neighbours", vectors, depth, correction_id)
        if missing:
            raise NotReady(f"shards {missing} did not answer", retry_after=5)
        return [merged([rows[i] for _, rows in answers], depth) for i in range(len(vectors))]

    def search_lexical(self, text: str, depth: int, where: Filter | None = None) -> LexicalList:
        """The top `depth` documents by BM25 over every shard as one index would score them: the shards' statistics
        added up first, then each shard's top scored with them (a shard missing from either step is named)."""
        counted, missing = self._ask("lexical_statistics", text)
        total = LexicalStatistics.summed([LexicalStatistics(**part) for _, part in counted])
        answers, late = self._ask("search_lexical", text, depth, where, total.to_dict())
        coverage = {doc_id: share for _, (_, covered) in answers for doc_id, share in covered.items()}
        hits = merged([found for _, (found, _) in answers], depth)
        return LexicalList(hits, {d: coverage[d] for d, _ in hits}, sorted({*missing, *late}))

    def status(self) -> list[dict[str, Any] | None]:
        """Each shard's status (None for one that does not answer now): where it runs and what it holds."""
        answers, _ = self._ask("status")
        said = dict(answers)
        return [said.get(number) for number in range(len(self.handles))]


@dataclass(frozen=True)
class StoredDocuments:
    """A collection kept in parts, as the server reads it from the store: its ids, their count, their vectors."""

    ids: Callable[[], Iterator[list[str]]]
    count: Callable[[], int]
    vectors: DocumentVectors


class ShardedLexical:
    """Every shard's BM25 top-k under the collection's statistics, merged; 503 when none answers."""

    def __init__(self, shards: ShardedSearch):
        self.shards = shards

    def search(self, index: SearchIndex, query: str, depth: int, scope: Scope = EVERY) -> LexicalList:
        with span("index.sharded_lexical_search", depth=depth):
            found = self.shards.search_lexical(query, depth, scope.where)
        if len(found.missing) == len(self.shards.handles):
            raise NotReady("no shard of the index answers; they are restarting", retry_after=5)
        return found


class ShardedDense:
    """Every shard's top-k, merged; 503 when none answers. The shards hold the vectors, so no `stored` here; a
    collection kept in parts (`documents` given) measures its scale of cosines from its stored documents."""

    def __init__(self, shards: ShardedSearch, documents: StoredDocuments | None = None):
        self.shards = shards
        self.documents = documents
        self._scale: tuple[str | None, DenseScale | None] = ("", None)  # (the correction it was measured for, it)
        self._held: int | None = None  # what every shard held at the last search (None: one did not answer)

    def scale(self, index: SearchIndex) -> DenseScale | None:
        """Measured again once the collection has grown or shrunk by a quarter, and only on shards that hold what
        the store does: one measured while they still follow would stay wrong until the next quarter."""
        if self.documents is None:
            return None  # CE_SHARDS: the server's keys alone; calibrated fusion takes the dense list at its word
        measured_for, scale = self._scale
        if measured_for != index.correction_id:
            scale = None
        count = self.documents.count()
        if self._held != count:
            return scale  # the shards are still following the store: what was measured before, if anything
        if scale is None or scale.stale(count):
            keys = [passage_key(doc_id, 0) for ids in self.documents.ids() for doc_id in ids]
            stored = self.documents.vectors.exact_vectors(index.correction, index.dense.dim)
            neighbours = functools.partial(self.shards.neighbours, correction_id=index.correction_id)
            scale = measured(keys, stored, neighbours, count)
            self._scale = (index.correction_id, scale)
        return scale

    def search(self, index: SearchIndex, vector: np.ndarray, depth: int, scope: Scope = EVERY) -> DenseList:
        with span("index.sharded_search", depth=depth):
            found = self.shards.search(vector, depth, index.correction_id, scope.where)
        if len(found.missing) == len(self.shards.handles):
            raise NotReady("no shard of the index answers; they are restarting", retry_after=5)
        self._held = None if found.missing else found.held
        return DenseList(found.hits, found.best, found.missing)
