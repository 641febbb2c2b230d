"""Pseudo-relevance feedback's one formula (Rocchio): the query vector moved toward its first results'. Pure numpy."""

from __future__ import annotations

import numpy as np


def rocchio(query: np.ndarray, feedback: np.ndarray, weight: float) -> np.ndarray:
    """q + weight * mean(feedback rows), scaled to unit length (q itself when there is no feedback row)."""
    if len(feedback) == 0:
        return query
    moved = query + weight * feedback.mean(axis=0)
    norm = np.linalg.norm(moved)
    return (moved / norm).astype(np.float32) if norm > 0 else query
