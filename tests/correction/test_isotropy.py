"""The isotropy, alignment and uniformity figures on clouds whose answer is known or computed by hand."""

import numpy as np
import pytest

from app.correction import Correction, CorrectionArtifact, CovarianceStats, fit_correction
from app.correction.artifact import BackboneRef, CorpusRef
from app.correction.isotropy import (
    alignment,
    alignment_uniformity,
    effective_rank,
    isoscore,
    isotropy_report,
    mean_random_cosine,
    partition_ratio,
    space_geometry,
    uniformity,
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
        "mean_random_cosine",
        "isoscore",
        "partition_ratio",
        "effective_rank",
        "top_direction_share",
        "dim",
        "n",
    }
    assert report["n"] == 500 and report["dim"] == 8 and report["mean_random_cosine"] > 0.8


def test_alignment_and_uniformity_match_a_hand_computation():
    # Three unit vectors: e1, e2 and (e1 + e2)/sqrt(2). Squared distances: e1-e2 2, e1-m and e2-m 2 - sqrt(2).
    e1, e2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    m = (e1 + e2) / np.sqrt(2)
    near = 2 - np.sqrt(2)
    expected = np.log((np.exp(-2 * 2) + 2 * np.exp(-2 * near)) / 3)
    assert uniformity(np.array([e1, e2, 3 * m])) == pytest.approx(expected, abs=1e-12)  # scale does not matter
    assert uniformity(np.array([e1, e2, m]), t=1.0) == pytest.approx(np.log((np.exp(-2) + 2 * np.exp(-near)) / 3))
    # Pairs (e1, m) and (e1, e1): mean squared distance (near + 0) / 2.
    assert alignment(np.array([e1, e1]), np.array([m, 5 * e1])) == pytest.approx(near / 2, abs=1e-12)
    # Only pairs with gold >= 4 count for alignment; uniformity counts each distinct sentence once.
    report = alignment_uniformity(np.array([e1, e2]), np.array([m, e1]), np.array([4.0, 1.0]), ["a", "b", "m", "a"])
    assert report["alignment"] == pytest.approx(near, abs=1e-4) and report["positive_pairs"] == 1
    assert report["uniformity"] == pytest.approx(expected, abs=1e-4)


def test_a_cloud_in_a_cone_is_less_uniform_than_its_whitened_version_and_sampling_agrees():
    # One dominant direction (a random scale along u) over small isotropic noise: a narrow cone.
    u = RNG.standard_normal(16)
    cone = 8.0 * np.outer(1 + RNG.random(3000), u) + RNG.standard_normal((3000, 16))
    mu, w = fit_correction(CovarianceStats(16).update(cone), "whitening")
    artifact = CorrectionArtifact.create(
        method="whitening",
        params={},
        mu=mu,
        W=w,
        backbone=BackboneRef(name="t", fingerprint="fp", dim=16, pooling="mean"),
        corpus=CorpusRef(size=3000, sha256="0" * 64),
    )
    whitened = Correction(artifact).apply(cone)
    assert uniformity(cone) > -0.1  # every pair close: exp(-2 d^2) near 1
    assert uniformity(whitened) < -3.0  # spread over the sphere, near the -4 of a uniform one in many dims
    exact = uniformity(whitened[:600])  # 179,700 pairs: every one
    assert uniformity(whitened[:600], max_pairs=50_000) == pytest.approx(exact, abs=0.02)  # random pairs estimate it


def test_the_fit_time_record_measures_raw_and_corrected_on_the_same_pairs_and_sample():
    cone = 5.0 + RNG.standard_normal((400, 6))
    mu, w = fit_correction(CovarianceStats(6).update(cone), "whitening")
    correction = Correction(
        CorrectionArtifact.create(
            method="whitening",
            params={},
            mu=mu,
            W=w,
            backbone=BackboneRef(name="t", fingerprint="fp", dim=6, pooling="mean"),
            corpus=CorpusRef(size=400, sha256="0" * 64),
        )
    )
    left, right, gold = cone[:50], cone[50:100] + 0.1 * cone[:50], np.where(np.arange(50) % 2, 4.5, 1.0)
    record = space_geometry(correction, cone, (left, right, gold))
    assert record["positive_pairs"] == 25 and record["uniformity_sentences"] == 400
    fixed = correction.apply(left[1::2]), correction.apply(right[1::2])
    assert record["raw"]["alignment"] == round(alignment(left[1::2], right[1::2]), 4)
    assert record["corrected"] == {
        "alignment": round(alignment(*fixed), 4),
        "uniformity": round(uniformity(correction.apply(cone)), 4),
    }
    assert record["corrected"]["uniformity"] < record["raw"]["uniformity"]
    assert space_geometry(correction, cone)["raw"]["alignment"] is None  # no labelled pairs, no alignment
