"""The pictures `report` draws for one pooling: the corrected space's geometry, spectrum, cosines and a map of the
test pairs raw, corrected and (given) adapted."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from app.benchmarks.geometry import plot_geometry
from app.benchmarks.pictures import GOLD_NAMES, gold_buckets, plot_spaces
from app.benchmarks.report import PoolingResult, plot_cosines, plot_spectrum
from app.correction import Correction
from app.correction.selection import TuningPairs
from app.offline.datasets import Pairs

PICTURE_PAIRS = 400  # test pairs drawn in the pictures of the spaces (800 sentences)


def draw_pooling(
    out: Path,
    result: PoolingResult,
    vectors: np.ndarray,
    test: Pairs,
    test_vectors: TuningPairs,
    adapted: TuningPairs | None,
    title: str,
) -> dict[str, Path]:
    """Each picture of pooling `result.pooling`, drawn into `out` from the fitting corpus's `vectors` and the test
    pairs' (and the adapted model's, if any); `result.geometry` must be measured first."""
    name, correction = result.pooling, Correction(result.auto)
    plots = {
        "geometry": plot_geometry(out / f"geometry-{name}.png", result.geometry, title),
        "spectrum": plot_spectrum(out / f"spectrum-{name}.png", vectors, correction, title),
        "cosines": plot_cosines(out / f"cosines-{name}.png", vectors, test_vectors, correction, title),
    }
    n = min(PICTURE_PAIRS, len(test))  # the first test pairs: both sentences of each, coloured by its gold
    raw = np.vstack([test_vectors.left[:n], test_vectors.right[:n]])
    spaces = {"raw": raw, f"corrected ({correction.artifact.method})": correction.apply(raw)}
    if adapted is not None:
        spaces["adapted"] = np.vstack([adapted.left[:n], adapted.right[:n]])
    plots["spaces"] = plot_spaces(
        out / f"spaces-{name}.png", spaces, gold_buckets(test.scores[:n]), GOLD_NAMES, title, ordered=True
    )
    return plots
