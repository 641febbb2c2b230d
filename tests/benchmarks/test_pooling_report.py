"""One pooling's pictures for the report: each drawn as a PNG under its own name."""

from __future__ import annotations

import numpy as np

from app.benchmarks.geometry import geometry_points
from app.benchmarks.pooling_report import draw_pooling
from app.benchmarks.report import PoolingResult
from app.correction import Correction
from app.correction.selection import TuningPairs
from app.offline.datasets import Pairs


def test_every_picture_of_a_pooling_is_drawn_with_an_adapted_space_beside(artifact_factory, tmp_path):
    rng = np.random.default_rng(0)
    left = rng.standard_normal((60, 8)) + 2.0
    right = left + 0.5 * rng.standard_normal((60, 8))
    gold = rng.uniform(0, 5, 60)
    test = Pairs([f"a{i}" for i in range(60)], [f"b{i}" for i in range(60)], gold)
    test_vectors = TuningPairs(left, right, gold, "test", (test.left, test.right))
    corpus = np.vstack([left, right])
    result = PoolingResult("mean", {}, {}, {}, artifact_factory(corpus))
    result.geometry = geometry_points(test_vectors, Correction(result.auto), test_vectors)
    plots = draw_pooling(tmp_path, result, corpus, test, test_vectors, test_vectors, "tiny, mean pooling")
    assert {k: p.name for k, p in plots.items()} == {
        "geometry": "geometry-mean.png",
        "spectrum": "spectrum-mean.png",
        "cosines": "cosines-mean.png",
        "spaces": "spaces-mean.png",
    }
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in plots.values())
