"""STS evaluation: Spearman correlation (x100) of cosine similarity against gold scores."""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from app.correction.pipeline import l2_normalize


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of each row of `a` with the same row of `b`."""
    return np.sum(l2_normalize(a) * l2_normalize(b), axis=1)


def spearman_x100(a: np.ndarray, b: np.ndarray, gold: np.ndarray) -> float:
    """The STS figure everyone reports: Spearman's rho of cosine vs gold, times 100."""
    return float(100.0 * spearmanr(cosine_rows(a, b), gold).statistic)


def score_correction(correction, pairs) -> float:
    """Spearman x100 of encoded pairs (TuningPairs) under a correction (None = raw cosine)."""
    left, right, gold = pairs.arrays
    if correction is not None:
        left, right = correction.apply(left), correction.apply(right)
    return spearman_x100(left, right, gold)
