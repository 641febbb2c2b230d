"""A FAISS index that knows vectors and string ids, nothing about texts; safe across threads."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

import faiss
import numpy as np


def label_of(doc_id: str) -> int:
    """A stable 63-bit FAISS label for a string id."""
    return int.from_bytes(hashlib.blake2b(doc_id.encode(), digest_size=8).digest(), "little") >> 1


class VectorIndex:
    """Inner-product search over unit vectors (cosine); upsert and delete by id."""

    def __init__(self, dim: int, factory: str = "Flat", *, correction_id: str | None = None):
        self.dim = dim
        self.factory = factory
        self.correction_id = correction_id
        self._index = faiss.IndexIDMap2(faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT))
        self._ids: dict[int, str] = {}
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, doc_id: str) -> bool:
        return label_of(doc_id) in self._ids

    def upsert(self, doc_ids: Sequence[str], vectors: np.ndarray) -> None:
        """Add vectors; an id already present is replaced."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (len(doc_ids), self.dim):
            raise ValueError(f"expected vectors of shape ({len(doc_ids)}, {self.dim}), got {vectors.shape}")
        if len(set(doc_ids)) != len(doc_ids):
            raise ValueError("duplicate ids in one upsert")
        labels = np.array([label_of(i) for i in doc_ids], dtype=np.int64)
        with self._lock:
            for label, doc_id in zip(labels.tolist(), doc_ids, strict=True):
                known = self._ids.get(label)
                if known is not None and known != doc_id:
                    raise ValueError(f"label collision between ids {known!r} and {doc_id!r}")
            self._remove_labels(labels)
            self._index.add_with_ids(vectors, labels)
            self._ids.update(zip(labels.tolist(), doc_ids, strict=True))

    def remove(self, doc_ids: Sequence[str]) -> int:
        """Delete ids; returns how many were present."""
        labels = np.array([label_of(i) for i in doc_ids], dtype=np.int64)
        with self._lock:
            return self._remove_labels(labels)

    def _remove_labels(self, labels: np.ndarray) -> int:
        present = np.array([lab for lab in labels.tolist() if lab in self._ids], dtype=np.int64)
        if present.size == 0:
            return 0
        self._index.remove_ids(faiss.IDSelectorBatch(present))
        for lab in present.tolist():
            del self._ids[lab]
        return int(present.size)

    def search(self, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """Top-k (id, score) per query, best first."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.dim:
            raise ValueError(f"expected queries of shape (n, {self.dim}), got {queries.shape}")
        with self._lock:
            if not self._ids:
                return [[] for _ in range(len(queries))]
            scores, labels = self._index.search(queries, min(k, len(self._ids)))
            ids = self._ids
            return [
                [(ids[lab], float(s)) for s, lab in zip(row_s, row_l, strict=True) if lab != -1]
                for row_s, row_l in zip(scores.tolist(), labels.tolist(), strict=True)
            ]
