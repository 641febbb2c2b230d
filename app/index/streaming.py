"""An index filled from vectors that arrive in chunks (a store scan, a benchmark's draws), never all in memory:
the first chunks train it, and a running exact top-10 of sampled documents calibrates it at the end."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import faiss
import numpy as np

from app.index.calibration import CALIBRATION_QUERIES
from app.index.faiss_index import VectorIndex
from app.index.rerank import ExactVectors

TRAIN_SAMPLE = 262_144  # vectors held before the index is made: its training sample (4,096 lists x 64)


@dataclass
class ExactTopK:
    """The running exact top-k labels of fixed queries over vectors seen a chunk at a time."""

    queries: np.ndarray
    k: int = 10
    scores: np.ndarray = field(init=False)
    labels: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.scores = np.full((len(self.queries), self.k), -np.inf, dtype=np.float32)
        self.labels = np.full((len(self.queries), self.k), -1, dtype=np.int64)

    def add(self, block: np.ndarray, first_label: int) -> None:
        k = min(self.k, len(block))
        scores, labels = faiss.knn(self.queries, np.ascontiguousarray(block), k, metric=faiss.METRIC_INNER_PRODUCT)
        scores = np.hstack([self.scores, scores])
        labels = np.hstack([self.labels, labels + first_label])
        best = np.argsort(-scores, axis=1, kind="stable")[:, : self.k]
        self.scores = np.take_along_axis(scores, best, axis=1)
        self.labels = np.take_along_axis(labels, best, axis=1)


class ChunkedBuild:
    """Builds what `VectorIndex.build` would for `expected` vectors, from chunks: a small collection is built
    from memory exactly as before; past TRAIN_SAMPLE the index is trained on the first chunks and filled as the
    rest arrive, holding one chunk at a time."""

    def __init__(self, dim: int, expected: int, *, seed: int = 0, **options: Any):
        self.dim, self.expected, self.seed, self.options = dim, expected, seed, options
        self.index: VectorIndex | None = None
        self.exact: ExactTopK | None = None
        self.selves = np.empty(0, dtype=np.int64)
        self._keys: list[str] = []
        self._held: list[np.ndarray] = []
        self._size = 0

    def add(self, keys: Sequence[str], vectors: np.ndarray | None) -> None:
        if vectors is None:
            raise ValueError("a dense build takes vectors with its keys")
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if self.index is None:
            self._keys.extend(keys)
            self._held.append(vectors)
            if sum(len(v) for v in self._held) >= TRAIN_SAMPLE:
                self._start()
            return
        self._fill(keys, vectors)

    def _start(self) -> None:
        """Make the index, trained on what is held, with calibration queries sampled from it; then fill it."""
        held = np.concatenate(self._held)
        keys, self._keys, self._held = self._keys, [], []
        rng = np.random.default_rng(self.seed)
        self.selves = np.sort(rng.choice(len(held), min(CALIBRATION_QUERIES, len(held)), replace=False))
        self.exact = ExactTopK(np.ascontiguousarray(held[self.selves]), k=11)  # themselves included, left out later
        n = max(self.expected, len(held))
        self.index = VectorIndex.sized(self.dim, n, held, seed=self.seed, **self.options)
        self._fill(keys, held)

    def _fill(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        if self.index is None or self.exact is None:
            raise RuntimeError("filled before its index was trained")
        self.index.upsert(keys, vectors)
        self.exact.add(vectors, self._size)
        self._size += len(vectors)

    def finish(self, exact: ExactVectors | None = None) -> VectorIndex:
        """The index, calibrated: built from memory when it never grew past the sample; else on the sampled
        documents' exact top-10, re-ranking from `exact` (keys -> exact vectors) if it keeps codes."""
        if self.index is None:
            held = np.concatenate(self._held) if self._held else np.empty((0, self.dim), dtype=np.float32)
            return VectorIndex.build(self.dim, self._keys, held, seed=self.seed, **self.options)
        if self.exact is None:
            raise RuntimeError("trained without its calibration sample")
        truth = np.array(
            [[j for j in row if j != q][:10] for q, row in zip(self.selves, self.exact.labels, strict=True)]
        )
        index = self.index
        rows = None if exact is None else (lambda labels: exact(cast(list[str], index.keys_at(labels))))  # all live
        index.calibrate_on(self.exact.queries, truth, selves=self.selves, rows=rows)
        return index
