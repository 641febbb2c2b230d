"""The corrections' maths: whitening, truncation, alpha, eps, ABTT and drop."""

import numpy as np
import pytest

from app.correction import CovarianceStats, fit_correction
from app.correction.methods import fit_whitening


def anisotropic(n=4000, d=16, seed=0):
    """Correlated vectors with a large shared offset: a narrow cone, like a raw encoder's."""
    rng = np.random.default_rng(seed)
    mixing = rng.standard_normal((d, d)) * np.linspace(3.0, 0.1, d)
    return rng.standard_normal((n, d)) @ mixing + 5.0


def test_full_whitening_gives_identity_covariance():
    x = anisotropic()
    mu, w = fit_whitening(CovarianceStats(16).update(x), alpha=0.5)
    y = (x - mu) @ w
    np.testing.assert_allclose(y.mean(0), 0.0, atol=1e-8)
    np.testing.assert_allclose(np.cov(y.T, bias=True), np.eye(16), atol=1e-6)


def test_dim_keeps_the_top_principal_directions():
    x = anisotropic()
    stats = CovarianceStats(16).update(x)
    mu, w = fit_whitening(stats, dim=4, alpha=0.5)
    assert w.shape == (16, 4)
    y = (x - mu) @ w
    np.testing.assert_allclose(np.cov(y.T, bias=True), np.eye(4), atol=1e-6)
    # The kept directions are the largest-variance ones: their raw variance beats any dropped one.
    _, w_rot = fit_whitening(stats, alpha=0.0)
    variances = np.var((x - mu) @ w_rot, axis=0)
    assert variances[:4].min() > variances[4:].max()


def test_alpha_zero_is_a_rotation_and_partial_alpha_scales_variance():
    x = anisotropic()
    stats = CovarianceStats(16).update(x)
    mu, w0 = fit_whitening(stats, alpha=0.0)
    np.testing.assert_allclose(w0.T @ w0, np.eye(16), atol=1e-10)
    eig = np.sort(np.linalg.eigvalsh(stats.covariance))[::-1]
    _, w25 = fit_whitening(stats, alpha=0.25)
    var25 = np.var((x - mu) @ w25, axis=0)
    np.testing.assert_allclose(var25, eig**0.5, rtol=1e-6)


@pytest.mark.parametrize("params", [{"alpha": -0.1}, {"alpha": 1.5}, {"dim": 0}, {"dim": 17}])
def test_whitening_rejects_out_of_range_parameters(params):
    with pytest.raises(ValueError):
        fit_correction(CovarianceStats(16).update(anisotropic()), "whitening", **params)


def test_unknown_method_is_named():
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        fit_correction(CovarianceStats(16).update(anisotropic()), "nope")


def test_directions_the_corpus_does_not_span_are_dropped_not_amplified():
    x = anisotropic(n=5)  # 5 points in 16 dims: they span 4 directions, the rest is rounding noise
    mu, w = fit_whitening(CovarianceStats(16).update(x), alpha=0.5)
    assert np.isfinite(w).all()
    np.testing.assert_array_equal(w[:, 4:], 0.0)
    # A new vector off the corpus's span is not blown up by 1/sqrt(1e-16).
    off_span = np.random.default_rng(3).standard_normal(16) + 5.0
    assert np.abs((off_span - mu) @ w).max() < 100


def mean_pair_cosine(x):
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    rng = np.random.default_rng(1)
    i, j = rng.integers(0, len(x), (2, 2000))
    return float(np.mean(np.sum(u[i] * u[j], axis=1)))


def _cosines(y):
    u = y / np.linalg.norm(y, axis=1, keepdims=True)
    return u @ u.T


def test_abtt_output_is_orthogonal_to_the_removed_directions():
    x = anisotropic()
    stats = CovarianceStats(16).update(x)
    mu, w = fit_correction(stats, "abtt", drop=3)
    top = np.linalg.svd(stats.covariance, hermitian=True)[0][:, :3]
    y = (x - mu) @ w
    assert w.shape == (16, 16)
    np.testing.assert_allclose(y @ top, 0.0, atol=1e-8)
    # Everything else is untouched: the residual of x - mu off the top directions.
    np.testing.assert_allclose(y, (x - mu) - (x - mu) @ top @ top.T, atol=1e-8)


def test_alpha_zero_keeps_the_cosines_of_the_centred_vectors():
    x = anisotropic()[:200]
    stats = CovarianceStats(16).update(x)
    mu, w = fit_whitening(stats, alpha=0.0)
    np.testing.assert_allclose(_cosines((x - mu) @ w), _cosines(x - stats.mean), atol=1e-10)
    mu_c, w_c = fit_correction(stats, "center")
    np.testing.assert_allclose(_cosines((x - mu_c) @ w_c), _cosines(x - stats.mean), atol=1e-10)
    mu_n, w_n = fit_correction(stats, "none")
    np.testing.assert_array_equal((x - mu_n) @ w_n, x)


def test_eps_moves_whitening_toward_a_rotation():
    x = anisotropic()[:300]
    stats = CovarianceStats(16).update(x)

    def condition(eps):
        _, w = fit_whitening(stats, alpha=0.5, eps=eps)
        norms = np.linalg.norm(w, axis=0)
        return norms.max() / norms.min()

    conditions = [condition(e) for e in (0.0, 0.1, 0.5, 0.9)]
    assert all(a > b for a, b in zip(conditions, conditions[1:], strict=False))
    assert condition(0.0) > 10
    np.testing.assert_allclose(condition(1.0), 1.0, rtol=1e-10)  # eps 1: every axis scaled alike
    mu, w = fit_whitening(stats, alpha=0.5, eps=1.0)
    np.testing.assert_allclose(_cosines((x - mu) @ w), _cosines(x - stats.mean), atol=1e-10)


def test_drop_skips_the_top_directions_before_whitening():
    x = anisotropic()
    stats = CovarianceStats(16).update(x)
    mu, w = fit_whitening(stats, alpha=0.5, drop=2, dim=5)
    top = np.linalg.svd(stats.covariance, hermitian=True)[0][:, :2]
    assert w.shape == (16, 5)
    np.testing.assert_allclose(top.T @ w, 0.0, atol=1e-10)
    np.testing.assert_allclose(np.cov(((x - mu) @ w).T, bias=True), np.eye(5), atol=1e-6)
    with pytest.raises(ValueError, match="dim"):
        fit_whitening(stats, drop=2, dim=15)


def test_principal_directions_have_a_fixed_sign_so_a_refit_gives_the_same_id():
    from app.correction.methods import Spectrum

    x = np.random.default_rng(3).standard_normal((500, 12)) @ np.random.default_rng(4).standard_normal((12, 12))
    spectrum = Spectrum.of(CovarianceStats(12).update(x))
    u = spectrum.directions
    assert (u[np.argmax(np.abs(u), axis=0), np.arange(12)] > 0).all()  # each column's largest entry positive
    flipped = CovarianceStats(12).update(-x)  # the same covariance from mirrored data
    np.testing.assert_allclose(Spectrum.of(flipped).directions, u, atol=1e-8)
