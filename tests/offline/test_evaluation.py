"""STS's figure: Spearman's rho of row cosines against gold, times 100, checked by hand."""

from __future__ import annotations

import numpy as np

from app.backbones.hashing import HashingBackbone
from app.correction.pipeline import Correction
from app.offline.datasets import Pairs
from app.offline.evaluation import cosine_rows, pairs_report, spearman_x100
from tests.conftest import CORPUS


def test_row_cosines_and_their_rank_correlation_with_gold():
    a = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    b = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [-1.0, 0.1]])
    cosines = cosine_rows(a, b)
    np.testing.assert_allclose(cosines[:3], [1.0, np.sqrt(0.5), 0.0], atol=1e-6)
    assert spearman_x100(a, b, np.array([5.0, 4.0, 1.0, 0.0])) == 100.0  # the same order as the cosines
    assert spearman_x100(a, b, np.array([0.0, 1.0, 4.0, 5.0])) == -100.0
    assert spearman_x100(a * 3.0, b * 0.5, np.array([5.0, 4.0, 1.0, 0.0])) == 100.0  # lengths do not matter


def test_a_pairs_report_scores_raw_and_corrected_on_the_same_vectors(artifact_factory):
    backbone = HashingBackbone(dim=16)
    left, right = CORPUS[:40], CORPUS[40:80]
    data = Pairs(left, right, np.arange(40, dtype=np.float64) % 6)
    vectors = backbone.encode(left + right)
    artifact = artifact_factory(vectors, fingerprint=backbone.fingerprint, alpha=0.5)
    report = pairs_report(backbone, data, vectors, artifact, gold=4.0)
    assert report["raw_spearman"] == round(spearman_x100(vectors[:40], vectors[40:], data.scores), 2)
    corrected = Correction(artifact).apply(vectors)
    assert report["corrected_spearman"] == round(spearman_x100(corrected[:40], corrected[40:], data.scores), 2)
    assert (report["n_pairs"], report["positive_pairs"], report["method"]) == (40, 12, "whitening")
