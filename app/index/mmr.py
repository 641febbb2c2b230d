"""Maximal marginal relevance: results re-ordered so that each next one is relevant to the query and unlike those
already chosen (Carbonell and Goldstein, 1998), on the stored vectors of their best passages."""

from __future__ import annotations

import numpy as np


def mmr_order(relevance: np.ndarray, vectors: np.ndarray, weight: float, k: int) -> list[int]:
    """Indices of the first k results by MMR: each step takes the candidate maximising
    weight * relevance - (1 - weight) * (its highest cosine to a chosen one); weight 1 keeps the relevance order.
    `vectors` are unit rows (a NaN row, a vector no longer stored, is never near anything)."""
    n = len(relevance)
    if n == 0 or k <= 0:
        return []
    unit = np.nan_to_num(np.asarray(vectors, dtype=np.float64))
    nearest = np.full(n, -np.inf)  # each candidate's highest cosine to a chosen one
    chosen: list[int] = []
    free = np.ones(n, dtype=bool)
    for _ in range(min(k, n)):
        penalty = np.where(np.isinf(nearest), 0.0, nearest)
        score = np.where(free, weight * relevance - (1.0 - weight) * penalty, -np.inf)
        best = int(np.argmax(score))  # ties: the earlier, better ranked one
        chosen.append(best)
        free[best] = False
        nearest = np.maximum(nearest, unit @ unit[best])
    return chosen
