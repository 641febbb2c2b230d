"""Where a search's dense list comes from, behind one interface: the collection's own index (here), or its shards on
Ray Serve (CE_SHARDS: `shards.fanout.ShardedDense`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from app.core.tracing import span
from app.index.dense_scale import DenseScale, measure
from app.index.metadata_filter import Filter
from app.index.search_index import SearchIndex, dense_hits

if TYPE_CHECKING:
    from app.index.document_vectors import DocumentVectors

StoredVectors = Callable[[Sequence[str]], np.ndarray]  # index keys -> their vectors in the search space


@dataclass(frozen=True)
class Scope:
    """Which documents a search may return: those a filter selected here (`allowed`), or the filter itself for
    shards that match it on their own documents (`where`); neither: every document."""

    allowed: Collection[str] | None = None
    where: Filter | None = None


EVERY = Scope()


@dataclass(frozen=True)
class DenseList:
    """Documents by their best passage's cosine, which passage that was, and the shards that did not answer;
    `stored` reads stored vectors where this process has them (re-scoring, the scale of cosines, feedback)."""

    hits: list[tuple[str, float]] = field(default_factory=list)
    best: dict[str, int] = field(default_factory=dict)
    missing: list[int] = field(default_factory=list)
    stored: StoredVectors | None = None


class DenseSource(Protocol):
    def search(self, index: SearchIndex, vector: np.ndarray, depth: int, scope: Scope = EVERY) -> DenseList: ...

    def scale(self, index: SearchIndex) -> DenseScale | None:
        """The collection's range of cosines (index/dense_scale), measured again once it has grown or shrunk."""


class LocalDense:
    """The collection's own dense index; a compressed one's candidates re-scored from the stored vectors."""

    def __init__(self, vectors: DocumentVectors):
        self.vectors = vectors

    def search(self, index: SearchIndex, vector: np.ndarray, depth: int, scope: Scope = EVERY) -> DenseList:
        stored = self.vectors.exact_vectors(index.correction, index.dense.dim)
        with span("index.dense_search", depth=depth, size=len(index.dense)):
            hits, best = dense_hits(index, vector, depth, scope.allowed, stored if index.dense.lossy else None)
        return DenseList(hits, best, stored=stored)

    def scale(self, index: SearchIndex) -> DenseScale | None:
        if index.dense_scale is None or index.dense_scale.stale(len(index.dense)):
            index.dense_scale = measure(index.dense, self.vectors.exact_vectors(index.correction, index.dense.dim))
        return index.dense_scale
