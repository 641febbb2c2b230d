"""A FAISS index over unit vectors keyed by string ids: exact or approximate, calibrated, thread-safe."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any

import faiss
import numpy as np
from tqdm.auto import tqdm

import app.index.factories as factories
import app.index.filtered_search as filtered
from app.index.calibration import RERANK, Rows, SearchDepth, calibrate, calibration_sample, search_parameters
from app.index.factories import lossy, new_faiss_index, rebuild_reason, servable_factory
from app.index.rerank import ExactVectors, rescored
from app.index.rwlock import ReadWriteLock

ADD_CHUNK = 100_000
Hits = list[list[tuple[str, float]]]  # per query, (id, cosine) best first


class IndexCorrupt(Exception):
    """FAISS and the id map around it disagree: only a rebuild from the store can be trusted."""


class VectorIndex:
    """Inner-product search over unit vectors (cosine); upsert, delete and filter by string id.

    Labels inside FAISS are positions in `_doc_of`, so an index that cannot delete in place (HNSW)
    still upserts and deletes: the old label becomes a tombstone that searches skip.
    """

    def __init__(
        self,
        dim: int,
        factory: str = "auto",
        *,
        correction_id: str | None = None,
        recall: float = 0.95,
        depth: SearchDepth | None = None,
    ):
        self.dim = dim
        self.requested = factory
        self.factory = servable_factory(dim, factory, 0)
        self.correction_id = correction_id
        self.recall = recall
        self.depth = depth or SearchDepth()  # the collection's own, over the calibrated params
        self.params: dict[str, int] = {}  # calibrated
        self.trained_size = 0
        self._index = new_faiss_index(dim, self.factory)
        self._doc_of: list[str | None] = []
        self._label_of: dict[str, int] = {}
        self._dead: set[int] = set()
        self._free: list[int] = []  # labels of removed documents, reused by the next upserts (in-place kinds)
        self._lock = ReadWriteLock()  # searches and snapshots read together; upserts and removes write alone
        self._version, self._labels = 0, filtered.LabelCache()  # labels change with each write: filters' kept per one
        self._deletes_in_place = factories.deletes_in_place(self._index)

    @classmethod
    def build(
        cls,
        dim: int,
        doc_ids: Sequence[str],
        vectors: np.ndarray,
        *,
        seed: int = 0,
        progress: bool = False,
        **options: Any,
    ) -> VectorIndex:
        """An index sized for these vectors: trained on a sample, filled, search parameters calibrated (`options`: the
        constructor's: factory, correction_id, recall, depth)."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        index = cls.sized(dim, len(doc_ids), vectors, seed=seed, **options)
        bar = tqdm(total=len(doc_ids), desc=f"index {index.factory}", unit="vec", disable=not progress, leave=False)
        with bar:
            for start in range(0, len(doc_ids), ADD_CHUNK):
                index.upsert(doc_ids[start : start + ADD_CHUNK], vectors[start : start + ADD_CHUNK])
                bar.update(min(ADD_CHUNK, len(doc_ids) - start))
        index.calibrate(vectors, seed=seed)
        return index

    @classmethod
    def sized(
        cls, dim: int, n: int, sample: np.ndarray, *, factory: str = "auto", seed: int = 0, **options: Any
    ) -> VectorIndex:
        """An empty index of the structure for `n` vectors, trained on `sample` (drawn like them): what a build
        fills in chunks when the vectors do not fit in memory at once."""
        index = cls(dim, factory, **options)
        index.factory = servable_factory(dim, factory, n)
        index._index = new_faiss_index(dim, index.factory)
        index._deletes_in_place = factories.deletes_in_place(index._index)
        if not index._index.is_trained:
            factories.train(index._index, np.ascontiguousarray(sample, dtype=np.float32), seed)
            index.trained_size = n
        return index

    # --- contents ------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._label_of)

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self._label_of

    @property
    def dead(self) -> int:
        return len(self._dead)

    def keys(self) -> list[str]:
        """Every key it holds, read at once (what `verify` compares with the store); FAISS's own count must agree."""
        with self._lock.reading():
            keys = list(self._label_of)
            if self._index.ntotal != len(keys) + len(self._dead):
                raise IndexCorrupt(
                    f"FAISS holds {self._index.ntotal} vectors for {len(keys)} keys and {len(self._dead)} tombstones"
                )
            return keys

    def keys_at(self, labels: Sequence[int]) -> list[str | None]:
        """The keys FAISS labels stand for (None for a removed one)."""
        return [self._doc_of[label] for label in labels]

    @property
    def lossy(self) -> bool:
        """It keeps codes, not vectors: searches given the exact vectors re-score its candidates with them."""
        return lossy(self.factory)

    @property
    def searched_with(self) -> dict[str, int]:
        """The search parameters in force: the calibrated ones, the collection's own in their place."""
        return self.depth.over(self._index, self.params)

    def upsert(self, doc_ids: Sequence[str], vectors: np.ndarray | None) -> None:
        """Add vectors; an id already present is replaced (keys without vectors, a sharded source's, are refused)."""
        if vectors is None:
            raise ValueError("a dense index takes vectors with its keys")
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (len(doc_ids), self.dim):
            raise ValueError(f"expected vectors of shape ({len(doc_ids)}, {self.dim}), got {vectors.shape}")
        if len(set(doc_ids)) != len(doc_ids):
            raise ValueError("duplicate ids in one upsert")
        with self._lock.writing():
            self._remove_ids(doc_ids)
            reused = [self._free.pop() for _ in range(min(len(self._free), len(doc_ids)))]
            start = len(self._doc_of)
            labels = reused + list(range(start, start + len(doc_ids) - len(reused)))
            self._index.add_with_ids(vectors, np.array(labels, dtype=np.int64))
            self._doc_of.extend([None] * (len(labels) - len(reused)))
            for doc_id, label in zip(doc_ids, labels, strict=True):
                self._doc_of[label] = doc_id
                self._label_of[doc_id] = label
            self._version += 1

    def remove(self, doc_ids: Sequence[str]) -> int:
        """Delete ids; returns how many were present."""
        with self._lock.writing():
            return self._remove_ids(doc_ids)

    def _remove_ids(self, doc_ids: Sequence[str]) -> int:
        labels = [self._label_of.pop(d) for d in doc_ids if d in self._label_of]
        if not labels:
            return 0
        self._version += 1
        for label in labels:
            self._doc_of[label] = None
        if self._deletes_in_place:  # its label is free again: churn does not grow the id map or snapshots
            self._index.remove_ids(factories.id_selector(self._index, labels))
            self._free.extend(labels)
        else:
            self._dead.update(labels)
        return len(labels)

    def rebuild_reason(self) -> str | None:
        """Why this index should be rebuilt from the store now, or None (see `factories.rebuild_reason`)."""
        return rebuild_reason(self.requested, self.factory, self.dim, len(self), self.dead, self.trained_size)

    # --- search ----------------------------------------------------------------------------------------

    def _selector(self, allowed: Collection[str] | None) -> tuple[Any, int, Any]:
        """(selector, how many vectors it lets through, what the selector needs kept alive)."""
        if allowed is not None:
            labels, selector = self._labels.selector(self._label_of, allowed, self._version)
            return selector, len(labels), labels
        if self._dead:
            dead = faiss.IDSelectorBatch(np.fromiter(self._dead, dtype=np.int64))
            return faiss.IDSelectorNot(dead), len(self), dead
        return None, len(self), None

    def search(
        self, queries: np.ndarray, k: int, *, allowed: Collection[str] | None = None, exact: ExactVectors | None = None
    ) -> Hits:
        """Top-k (id, score) per query, best first; `allowed` restricts the candidates to those ids. A compressed
        index given `exact` (the stored vectors) re-scores its top `rerank` candidates with them."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.dim:
            raise ValueError(f"expected queries of shape (n, {self.dim}), got {queries.shape}")
        params = self.searched_with
        rerank = exact is not None and self.lossy
        with self._lock.reading():
            rows = None
            if allowed is not None:  # a large share of the index: searched unfiltered, deeper, and filtered after
                want = min(max(k, params.get(RERANK, k)) if rerank else k, len(allowed))
                rows = filtered.post_filtered(lambda d: self._unfiltered(queries, d, params), allowed, want, len(self))
            if rows is None:
                selector, candidates, labels = self._selector(allowed)  # `labels`: what the selector points into
                if (k := min(k, candidates)) == 0:
                    return [[] for _ in range(len(queries))]
                depth = min(max(k, params.get(RERANK, k)), candidates) if rerank else k
                widen = filtered.widening(filtered.share_of(allowed, len(self))) if allowed is not None else 1.0
                few = allowed is not None and candidates <= filtered.EXACT_LIMIT
                found = filtered.exact_within(self._index, labels, queries, depth) if few else None
                rows = (
                    filtered.rows_of(self._doc_of, *found)
                    if found
                    else self._search(queries, depth, selector, params, widen)
                )
                if allowed is not None and any(len(r) < depth for r in rows):
                    rows = self._search(queries, depth, selector, params, math.inf)  # still too few: every list
        if rerank and exact is not None:
            return [rescored(row, q, exact, k) for row, q in zip(rows, queries, strict=True)]
        return rows

    def _unfiltered(self, queries: np.ndarray, depth: int, params: dict[str, int]) -> Hits:
        selector, _, _alive = self._selector(None)  # `_alive`: what the selector points into, kept until it ran
        return self._search(queries, depth, selector, params, 1.0)

    def _search(self, queries: np.ndarray, k: int, selector: Any, params: dict[str, int], widen: float) -> Hits:
        found = self._index.search(queries, k, params=search_parameters(self._index, params, selector, widen=widen))
        return filtered.rows_of(self._doc_of, *found)

    def calibrate(self, vectors: np.ndarray, *, seed: int = 0) -> dict[str, int]:
        """Set the search depth for the recall target on `vectors`, the ones this index was just built from."""
        if len(vectors) <= 11:
            return self.params
        labels, queries, truth = calibration_sample(vectors, seed=seed)
        return self.calibrate_on(queries, truth, selves=labels, rows=lambda found: vectors[found])

    def calibrate_on(
        self, queries: np.ndarray, truth: np.ndarray, *, selves: np.ndarray | None = None, rows: Rows | None = None
    ) -> dict[str, Any]:
        """Set the search depth for the recall target on queries whose true top-10 labels are known; `rows` gives
        the exact vectors of labels, for a compressed index's re-ranking."""
        with self._lock.reading():
            rows = rows if self.lossy else None
            found = calibrate(self._index, queries, truth, self.recall, selves=selves, rows=rows)
        self.params = found or self.params
        return self.params

    # --- persistence and size -------------------------------------------------------------------------

    def memory_bytes(self) -> int:
        """Bytes of the FAISS structure (vectors, lists, graph), measured by serializing it."""
        with self._lock.reading():
            return int(faiss.serialize_index(self._index).nbytes)

    def state(self) -> tuple[np.ndarray, dict[str, Any]]:
        """The FAISS bytes and what is needed to rebuild this object around them."""
        with self._lock.reading():
            meta = {k: getattr(self, k) for k in ("dim", "requested", "factory", "correction_id", "recall")}
            meta |= {"params": dict(self.params), "trained_size": self.trained_size}
            meta |= {"doc_of": list(self._doc_of), "dead": sorted(self._dead)}
            return faiss.serialize_index(self._index), meta

    @classmethod
    def from_state(cls, data: np.ndarray, meta: dict[str, Any], *, depth: SearchDepth | None = None) -> VectorIndex:
        index = cls(
            meta["dim"], meta["requested"], correction_id=meta["correction_id"], recall=meta["recall"], depth=depth
        )
        index.factory = meta["factory"]
        index._index = factories.with_direct_map(faiss.deserialize_index(np.asarray(data, dtype=np.uint8)))
        index._deletes_in_place = factories.deletes_in_place(index._index)
        index.params = {k: int(v) for k, v in meta["params"].items()}
        index.trained_size = int(meta["trained_size"])
        index._doc_of = list(meta["doc_of"])
        index._label_of = {d: i for i, d in enumerate(index._doc_of) if d is not None}
        index._dead = set(meta["dead"])
        index._free = [i for i, d in enumerate(index._doc_of) if d is None and i not in index._dead]
        return index

    def describe(self) -> dict[str, Any]:
        return {
            "size": len(self),
            "dim": self.dim,
            "factory": self.factory,
            "requested": self.requested,
            "params": self.searched_with,
            "calibrated": dict(self.params),
            "compressed": self.lossy,  # its candidates are re-scored exactly from the stored vectors
            "tombstones": self.dead,
            "correction": self.correction_id,
        }
