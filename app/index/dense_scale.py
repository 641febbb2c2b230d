"""Where a collection's cosines lie: how close a document's nearest other document is (high) and its CANDIDATES-th
(low), medians over a fixed sample of its documents. Calibrated fusion reads a query's best cosine against this range
to tell a dense list with something to say from one without (an identifier, a word the model never learned)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.index.faiss_index import VectorIndex
from app.index.fusion import CANDIDATES, confidence
from app.index.key_index import KeyIndex
from app.index.passages import best_passages, passage_of
from app.index.rerank import ExactVectors

Neighbours = Callable[[np.ndarray, int], list[list[tuple[str, float]]]]  # vectors, k -> top-k passages of each
SAMPLE = 128  # documents searched for their neighbours
STALE_AFTER = 0.25  # measured again once the collection grew or shrank by this share
PASSAGE_DEPTH = 2  # passages searched per document wanted, so that `CANDIDATES` other documents are found


@dataclass(frozen=True)
class DenseScale:
    """A collection's own range of cosines between related and unrelated documents."""

    low: float  # median cosine of a document's CANDIDATES-th nearest other document
    high: float  # median cosine of its nearest other document
    vectors: int  # the index's size (passages) when measured: read in O(1) on every search

    def confidence(self, best: float) -> float:
        """0 when a query's best cosine is no higher than unrelated documents', 1 at near-duplicates' and above."""
        return confidence(best, self.low, self.high)

    @property
    def range(self) -> tuple[float, float]:
        return self.low, self.high

    def stale(self, vectors: int) -> bool:
        return abs(vectors - self.vectors) > STALE_AFTER * max(self.vectors, 1)

    def describe(self) -> dict[str, Any]:
        return {"low": round(self.low, 4), "high": round(self.high, 4), "vectors": self.vectors}


def sample_keys(keys: list[str], n: int = SAMPLE) -> list[str]:
    """First passages evenly spaced among the sorted keys: every replica of an index picks the same documents."""
    firsts = sorted(k for k in keys if passage_of(k)[1] == 0)
    return firsts[:: max(1, len(firsts) // n)][:n]


def measure(dense: VectorIndex | KeyIndex, stored: ExactVectors) -> DenseScale | None:
    """The scale of a dense index (a VectorIndex), its sampled documents' vectors read from the store (`stored`); None
    below two documents."""
    return measured(dense.keys(), stored, dense.search, len(dense))  # a compressed index's scores will do here


def measured(keys: list[str], stored: ExactVectors, neighbours: Neighbours, size: int) -> DenseScale | None:
    """The scale of the passages `keys` name, searched with `neighbours` (a whole index's search, or its shards'
    merged): the same figures either way, since the sample and the nearest passages are the same."""
    sample = sample_keys(keys)
    if len(sample) < 2:
        return None
    vectors = stored(sample)
    keep = ~np.isnan(vectors).any(axis=1)
    rows = neighbours(vectors[keep], (CANDIDATES + 1) * PASSAGE_DEPTH)
    highs, lows = [], []
    for key, row in zip(np.asarray(sample)[keep], rows, strict=True):
        others = [s for d, s in best_passages(row)[0] if d != passage_of(key)[0]][:CANDIDATES]
        if others:
            highs.append(others[0])
            lows.append(others[-1])
    if not highs:
        return None
    return DenseScale(float(np.median(lows)), float(np.median(highs)), size)
