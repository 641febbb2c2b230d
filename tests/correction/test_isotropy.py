"""The isotropy figures on clouds whose answer is known."""

import numpy as np
import pytest

from app.correction.isotropy import (
    effective_rank,
    isoscore,
    isotropy_report,
    mean_random_cosine,
    partition_ratio,
)

RNG = np.random.default_rng(0)


def test_isoscore_is_near_one_for_an_isotropic_gaussian_and_near_zero_for_a_rank_one_cloud():
    assert isoscore(RNG.standard_normal((20_000, 32))) > 0.97
    line = np.outer(RNG.standard_normal(5000), RNG.standard_normal(32))
    assert isoscore(line) < 0.01
    # In between: half of the dims used.
    half = RNG.standard_normal((20_000, 32)) * np.r_[np.ones(16), np.zeros(16)]
    assert 0.35 < isoscore(half) < 0.6


def test_effective_rank_counts_used_dims():
    assert effective_rank(np.ones(10)) == pytest.approx(10.0)
    assert effective_rank(np.r_[np.ones(4), np.zeros(6)]) == pytest.approx(4.0)
    assert effective_rank(np.r_[1.0, np.full(9, 1e-9)]) == pytest.approx(1.0, abs=1e-3)


def test_cone_versus_sphere():
    sphere = RNG.standard_normal((5000, 16))
    cone = sphere * 0.2 + 3.0
    assert abs(mean_random_cosine(sphere)) < 0.02
    assert mean_random_cosine(cone) > 0.9
    unit = sphere / np.linalg.norm(sphere, axis=1, keepdims=True)
    assert partition_ratio(unit) > 0.9
    cone_unit = cone / np.linalg.norm(cone, axis=1, keepdims=True)
    # On unit vectors Z(c) of the cone's axis is about e times the others': I(W) near 1/e, far below 1.
    assert partition_ratio(cone_unit) < 0.45


def test_partition_ratio_does_not_overflow_on_large_vectors():
    assert 0.0 <= partition_ratio(RNG.standard_normal((100, 8)) * 1e4 + 1e4) <= 1.0


def test_report_has_the_documented_keys():
    report = isotropy_report(RNG.standard_normal((500, 8)) + 4.0)
    assert set(report) == {
        "mean_random_cosine", "isoscore", "partition_ratio", "effective_rank", "top_direction_share", "dim", "n",
    }  # fmt: skip
    assert report["n"] == 500 and report["dim"] == 8 and report["mean_random_cosine"] > 0.8
