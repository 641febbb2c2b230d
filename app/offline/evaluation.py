"""STS evaluation: Spearman correlation (x100) of cosine similarity against gold scores."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import spearmanr

from app.backbones.base import Backbone
from app.correction.artifact import CorrectionArtifact
from app.correction.isotropy import POSITIVE_GOLD, alignment_uniformity
from app.correction.pipeline import Correction, l2_normalize
from app.correction.selection import TuningPairs
from app.offline.datasets import Pairs
from app.offline.encoding import corrected_vectors


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of each row of `a` with the same row of `b`."""
    cosines: np.ndarray = np.sum(l2_normalize(a) * l2_normalize(b), axis=1)
    return cosines


def spearman_x100(a: np.ndarray, b: np.ndarray, gold: np.ndarray) -> float:
    """The STS figure everyone reports: Spearman's rho of cosine vs gold, times 100."""
    return float(100.0 * spearmanr(cosine_rows(a, b), gold).statistic)


def score_correction(correction: Correction | None, pairs: TuningPairs) -> float:
    """Spearman x100 of encoded pairs (TuningPairs) under a correction (None = raw cosine)."""
    left, right, gold = pairs.arrays
    if correction is not None:
        left, right = correction.apply(left), correction.apply(right)
    return spearman_x100(left, right, gold)


def pairs_report(
    backbone: Backbone, data: Pairs, vectors: np.ndarray, artifact: CorrectionArtifact, *, gold: float = POSITIVE_GOLD
) -> dict[str, Any]:
    """Spearman x100, alignment of the pairs scored at least `gold` and uniformity, raw and under `artifact`, of
    labelled pairs whose raw vectors (left rows, then right) are `vectors`: what `eval` prints."""
    n, texts = len(data), data.left + data.right
    corrected = corrected_vectors(backbone, Correction(artifact), texts, vectors, desc="eval pairs")
    raw_geometry = alignment_uniformity(vectors[:n], vectors[n:], data.scores, texts, gold=gold)
    geometry = alignment_uniformity(corrected[:n], corrected[n:], data.scores, texts, gold=gold)
    return {
        "raw_spearman": round(spearman_x100(vectors[:n], vectors[n:], data.scores), 2),
        "corrected_spearman": round(spearman_x100(corrected[:n], corrected[n:], data.scores), 2),
        "raw_alignment": raw_geometry["alignment"],
        "raw_uniformity": raw_geometry["uniformity"],
        "alignment": geometry["alignment"],
        "uniformity": geometry["uniformity"],
        "positive_pairs": geometry["positive_pairs"],
        "n_pairs": n,
        "pooling": backbone.pooling,
        "method": artifact.method,
        "params": artifact.params,
        "dim": artifact.out_dim,
        "selection": artifact.extra.get("selection"),
        "backbone": backbone.name,
    }
