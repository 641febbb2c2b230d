"""A query fanned out to every shard of a collection, their top-k merged; a shard that does not answer in time is
named in the answer (`partial`), never silently left out."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from app.core.errors import NotReady
from app.core.tracing import span
from app.index.dense_lists import DenseList
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

    @property
    def partial(self) -> bool:
        return bool(self.missing)


class ShardedSearch:
    """Every shard searched at once through its Serve handle; the answer waits for each at most `timeout` s."""

    def __init__(self, handles: list, timeout: float = SHARD_TIMEOUT):
        self.handles = handles
        self.timeout = timeout

    def search(self, vector: np.ndarray, depth: int, correction_id: str | None = None, where=None) -> ShardedHits:
        """The top `depth` documents (matching `where`) of the shards that answered, with those that did not; each
        shard answers only in `correction_id`'s space."""
        vector = np.ascontiguousarray(vector, dtype=np.float32)
        asked = [handle.search.remote(vector, depth, correction_id, where) for handle in self.handles]
        deadline = time.monotonic() + self.timeout
        lists, best, missing = [], {}, []
        for number, response in enumerate(asked):
            try:
                docs, passages = response.result(timeout_s=max(deadline - time.monotonic(), 1e-3))
            except Exception as exc:  # a timeout, a dead replica, a shard still opening: Ray raises each its own way
                said = str(exc).splitlines()  # an exception without a message says nothing: name its type
                log.warning("shard %d did not answer: %s", number, said[0][:200] if said else type(exc).__name__)
                response.cancel()
                missing.append(number)
                continue
            lists.append(docs)
            best.update(passages)
        hits = merged(lists, depth)
        return ShardedHits(hits, {doc_id: best[doc_id] for doc_id, _ in hits if doc_id in best}, missing)

    def status(self) -> list[dict | None]:
        """Each shard's status (None for one that does not answer now): where it runs and what it holds."""
        asked = [handle.status.remote() for handle in self.handles]
        out = []
        for response in asked:
            try:
                out.append(response.result(timeout_s=self.timeout))
            except Exception:
                response.cancel()
                out.append(None)
        return out


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
