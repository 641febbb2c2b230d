"""Fitting methods; each returns an affine map (mu, W) so that every correction applies the same way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.core.names import Method
from app.correction.stats import CovarianceStats

FitResult = tuple[np.ndarray, np.ndarray]

RANK_RTOL = 1e-10  # real encoders' smallest variances sit near 1e-4 of the largest; noise near 1e-16


@dataclass(frozen=True)
class Spectrum:
    """Mean, principal directions (columns) and their variances, largest first, of a corpus."""

    mean: np.ndarray
    directions: np.ndarray
    variances: np.ndarray

    @classmethod
    def of(cls, stats: CovarianceStats) -> Spectrum:
        u, s, _ = np.linalg.svd(stats.covariance, hermitian=True)
        # A direction's sign is arbitrary (LAPACK's choice may differ between builds): fix it, each column's
        # largest entry positive, so that a refit gives the same W, and the same artifact id, anywhere.
        signs = np.sign(u[np.argmax(np.abs(u), axis=0), np.arange(u.shape[1])])
        return cls(stats.mean, u * np.where(signs == 0, 1.0, signs), s)

    @property
    def dim(self) -> int:
        return int(self.variances.shape[0])

    @property
    def rank(self) -> int:
        """Directions whose variance is not rounding noise next to the largest one."""
        return numerical_rank(self.variances)


def numerical_rank(eigenvalues: np.ndarray) -> int:
    """Directions whose variance is not rounding noise next to the largest one."""
    if eigenvalues[0] <= 0:
        return 0
    return int(np.sum(eigenvalues > RANK_RTOL * eigenvalues[0]))


def _check_range(name: str, value: float, low: float, high: float) -> None:
    if not low <= value <= high:
        raise ValueError(f"{name} must be within [{low:g}, {high:g}], got {value}")


def whitening_scale(spectrum: Spectrum, *, alpha: float, eps: float) -> np.ndarray:
    """Per-direction scale S^-alpha after shrinking S toward its mean by eps; 0 where S is only noise."""
    _check_range("alpha", alpha, 0.0, 1.0)
    _check_range("eps", eps, 0.0, 1.0)
    s = spectrum.variances
    spanned = np.arange(spectrum.dim) < spectrum.rank
    if not spanned.any():
        return np.zeros_like(s)
    shrunk = (1.0 - eps) * s + eps * s[spanned].mean()
    # Directions the corpus does not span (e.g. the few that a LayerNorm'd last layer never uses)
    # carry only rounding noise; whitening would amplify it, so they get a zero column instead.
    return np.where(spanned, np.maximum(shrunk, RANK_RTOL * s[0]) ** -alpha, 0.0)


def whitening_from_spectrum(
    spectrum: Spectrum, *, dim: int | None = None, alpha: float = 0.5, eps: float = 0.0, drop: int = 0
) -> FitResult:
    """W = U[:, drop:drop+dim] diag(S^-alpha): skip the top `drop` directions, keep `dim` after them."""
    d = spectrum.dim
    _check_range("drop", drop, 0, d - 1)
    k = d - drop if dim is None else dim
    _check_range("dim", k, 1, d - drop)
    scale = whitening_scale(spectrum, alpha=alpha, eps=eps)
    cols = slice(drop, drop + k)
    return spectrum.mean, spectrum.directions[:, cols] * scale[cols]


def fit_whitening(
    stats: CovarianceStats, *, dim: int | None = None, alpha: float = 0.5, eps: float = 0.0, drop: int = 0
) -> FitResult:
    """BERT-whitening (Su et al. 2021), generalized: alpha < 0.5 is gentler, eps shrinks, drop skips."""
    return whitening_from_spectrum(Spectrum.of(stats), dim=dim, alpha=alpha, eps=eps, drop=drop)


def fit_abtt(stats: CovarianceStats, *, drop: int = 1) -> FitResult:
    """All-but-the-top (Mu & Viswanath 2018): subtract the mean, project out the top `drop` directions."""
    spectrum = Spectrum.of(stats)
    _check_range("drop", drop, 1, spectrum.dim - 1)
    top = spectrum.directions[:, :drop]
    return spectrum.mean, np.eye(spectrum.dim) - top @ top.T


def fit_center(stats: CovarianceStats) -> FitResult:
    """Subtract the corpus mean only: the common offset is what makes every cosine high."""
    return stats.mean, np.eye(stats.dim)


def fit_none(stats: CovarianceStats) -> FitResult:
    """The identity, so that 'no correction' is an artifact like any other (and can win a selection)."""
    return np.zeros(stats.dim), np.eye(stats.dim)


METHODS: dict[Method, Callable[..., FitResult]] = {
    Method.NONE: fit_none,
    Method.CENTER: fit_center,
    Method.ABTT: fit_abtt,
    Method.WHITENING: fit_whitening,
}


def fit_correction(stats: CovarianceStats, method: str, **params: Any) -> FitResult:
    """Dispatch to a fitting method by name."""
    try:
        fit = METHODS[Method(method)]
    except (KeyError, ValueError):
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}") from None
    return fit(stats, **params)
