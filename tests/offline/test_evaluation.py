"""STS's figure: Spearman's rho of row cosines against gold, times 100, checked by hand."""

from __future__ import annotations

import numpy as np

from app.offline.evaluation import cosine_rows, spearman_x100


def test_row_cosines_and_their_rank_correlation_with_gold():
    a = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    b = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [-1.0, 0.1]])
    cosines = cosine_rows(a, b)
    np.testing.assert_allclose(cosines[:3], [1.0, np.sqrt(0.5), 0.0], atol=1e-6)
    assert spearman_x100(a, b, np.array([5.0, 4.0, 1.0, 0.0])) == 100.0  # the same order as the cosines
    assert spearman_x100(a, b, np.array([0.0, 1.0, 4.0, 5.0])) == -100.0
    assert spearman_x100(a * 3.0, b * 0.5, np.array([5.0, 4.0, 1.0, 0.0])) == 100.0  # lengths do not matter
