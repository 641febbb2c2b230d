"""Where a search's dense list comes from, behind one interface: the collection's own index, or its shards on Ray
Serve (CE_SHARDS)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from app.core.errors import NotReady
from app.core.tracing import span
from app.index.search_index import SearchIndex, dense_hits

if TYPE_CHECKING:
    from app.index.builder import IndexBuilder
    from app.shards.fanout import ShardedSearch

StoredVectors = Callable[[Sequence[str]], np.ndarray]  # index keys -> their vectors in the search space


@dataclass(frozen=True)
class DenseList:
    """Documents by their best passage's cosine, which passage that was, and the shards that did not answer;
    `stored` reads stored vectors where this process has them (re-scoring, the scale of cosines, feedback)."""

    hits: list[tuple[str, float]] = field(default_factory=list)
    best: dict[str, int] = field(default_factory=dict)
    missing: list[int] = field(default_factory=list)
    stored: StoredVectors | None = None


class DenseSource(Protocol):
    def search(self, index: SearchIndex, vector: np.ndarray, depth: int, allowed=None, where=None) -> DenseList: ...


class LocalDense:
    """The collection's own dense index; a compressed one's candidates re-scored from the stored vectors."""

    def __init__(self, builder: IndexBuilder):
        self.builder = builder

    def search(self, index: SearchIndex, vector: np.ndarray, depth: int, allowed=None, where=None) -> DenseList:
        stored = self.builder.exact_vectors(index.correction, index.dense.dim)
        with span("index.dense_search", depth=depth, size=len(index.dense)):
            hits, best = dense_hits(index, vector, depth, allowed, stored if index.dense.lossy else None)
        return DenseList(hits, best, stored=stored)


class ShardedDense:
    """Every shard's top-k, merged; 503 when none answers. The shards hold the vectors, so no `stored` here."""

    def __init__(self, shards: ShardedSearch):
        self.shards = shards

    def search(self, index: SearchIndex, vector: np.ndarray, depth: int, allowed=None, where=None) -> DenseList:
        with span("index.sharded_search", depth=depth):
            found = self.shards.search(vector, depth, index.correction_id, where)
        if len(found.missing) == len(self.shards.handles):
            raise NotReady("no shard of the index answers; they are restarting", retry_after=5)
        return DenseList(found.hits, found.best, found.missing)
