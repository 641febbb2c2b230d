"""Streaming statistics: the mean and covariance numpy gives, merged across batches; bad input refused."""

import numpy as np
import pytest

from app.correction import CovarianceStats
from tests.correction.test_methods import anisotropic


def test_streaming_stats_match_numpy_and_merge():
    x = anisotropic()
    whole = CovarianceStats(16).update(x)
    parts = CovarianceStats(16).update(x[:1000]).merge(CovarianceStats(16).update(x[1000:]))
    np.testing.assert_allclose(whole.mean, x.mean(0), rtol=1e-10)
    np.testing.assert_allclose(whole.covariance, np.cov(x.T, bias=True), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(parts.covariance, whole.covariance, rtol=1e-10)
    assert parts.count == whole.count == 4000


def test_stats_refuse_bad_input():
    with pytest.raises(ValueError, match="shape"):
        CovarianceStats(4).update(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="NaN"):
        CovarianceStats(2).update(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="at least 2"):
        _ = CovarianceStats(2).update(np.ones((1, 2))).covariance
