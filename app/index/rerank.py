"""Exact re-scoring of a compressed index's candidates: their codes only approximate the vectors, the stored
vectors do not."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

# index keys -> their vectors in the search space (float32, a NaN row for a key no longer stored)
ExactVectors = Callable[[Sequence[str]], np.ndarray]


def rescored(hits: list[tuple[str, float]], query: np.ndarray, exact: ExactVectors, k: int) -> list[tuple[str, float]]:
    """The top k of `hits` by exact inner product with `query`, best first; keys with no stored vector dropped."""
    if not hits:
        return []
    scores = exact([key for key, _ in hits]) @ query
    order = [i for i in np.argsort(-np.nan_to_num(scores, nan=-np.inf), kind="stable") if not np.isnan(scores[i])]
    return [(hits[i][0], float(scores[i])) for i in order[:k]]
