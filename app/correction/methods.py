"""Fitting methods; each returns an affine map (mu, W) so that every correction applies the same way."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from app.correction.stats import CovarianceStats

FitResult = tuple[np.ndarray, np.ndarray]


def _spectrum(stats: CovarianceStats) -> tuple[np.ndarray, np.ndarray]:
    """Principal directions and variances of the corpus, largest first (SVD of the covariance)."""
    u, s, _ = np.linalg.svd(stats.covariance, hermitian=True)
    return u, s


RANK_RTOL = 1e-10  # real encoders' smallest variances sit near 1e-4 of the largest; noise near 1e-16


def numerical_rank(eigenvalues: np.ndarray) -> int:
    """Directions whose variance is not rounding noise next to the largest one."""
    if eigenvalues[0] <= 0:
        return 0
    return int(np.sum(eigenvalues > RANK_RTOL * eigenvalues[0]))


def fit_whitening(stats: CovarianceStats, *, dim: int | None = None, alpha: float = 0.5) -> FitResult:
    """BERT-whitening (Su et al. 2021): W = U diag(S^-alpha), first `dim` columns kept."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be within [0, 1], got {alpha}")
    k = stats.dim if dim is None else dim
    if not 1 <= k <= stats.dim:
        raise ValueError(f"dim must be within [1, {stats.dim}], got {k}")
    u, s = _spectrum(stats)
    # Directions the corpus does not span (e.g. the few that a LayerNorm'd last layer never uses)
    # carry only rounding noise; whitening would amplify it, so they are dropped (zero columns).
    spanned = np.arange(k) < numerical_rank(s)
    scale = np.where(spanned, np.maximum(s[:k], RANK_RTOL * s[0]) ** -alpha, 0.0)
    w = u[:, :k] * scale
    return stats.mean, w


METHODS: dict[str, Callable[..., FitResult]] = {
    "whitening": fit_whitening,
}


def fit_correction(stats: CovarianceStats, method: str, **params) -> FitResult:
    """Dispatch to a fitting method by name."""
    try:
        fit = METHODS[method]
    except KeyError:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(METHODS)}") from None
    return fit(stats, **params)
