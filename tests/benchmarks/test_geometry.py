"""The alignment-uniformity plane: one point per space, and the rows of its table."""

from __future__ import annotations

import numpy as np

from app.benchmarks.geometry import geometry_points, geometry_rows, plot_geometry
from app.correction import Correction
from app.correction.selection import TuningPairs


def test_each_space_is_a_point_and_a_row(artifact_factory, tmp_path):
    rng = np.random.default_rng(0)
    left = rng.standard_normal((60, 8)) + 3.0  # a cone, as raw sentence vectors are
    right = left + 0.1 * rng.standard_normal((60, 8))
    texts = ([f"l{i}" for i in range(60)], [f"r{i}" for i in range(60)])
    pairs = TuningPairs(left, right, np.full(60, 5.0), "t", texts)
    points = geometry_points(pairs, Correction(artifact_factory(np.vstack([left, right]))))
    assert set(points) == {"raw", "corrected"}
    assert points["corrected"]["uniformity"] < points["raw"]["uniformity"]  # whitening spreads the cone out
    assert geometry_rows("mean", points)[0].startswith("| mean | raw | ")
    assert plot_geometry(tmp_path / "plane.png", points, "mean").stat().st_size > 1000
