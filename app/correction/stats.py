"""Sufficient statistics of a corpus of vectors: O(d^2) memory for any size, mergeable across workers."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class CovarianceStats:
    """Count, sum and sum of outer products in float64; enough for the mean and covariance."""

    dim: int
    count: int = 0
    total: np.ndarray = field(default_factory=lambda: np.zeros(0))  # empty: zeros of `dim`
    outer: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    def __post_init__(self) -> None:
        if self.total.size == 0:
            self.total = np.zeros(self.dim, dtype=np.float64)
        if self.outer.size == 0:
            self.outer = np.zeros((self.dim, self.dim), dtype=np.float64)

    def update(self, x: np.ndarray) -> CovarianceStats:
        """Add a batch of row vectors."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"expected shape (n, {self.dim}), got {x.shape}")
        if not np.isfinite(x).all():
            raise ValueError("vectors contain NaN or inf")
        self.count += x.shape[0]
        self.total += x.sum(axis=0)
        self.outer += x.T @ x
        return self

    def merge(self, other: CovarianceStats) -> CovarianceStats:
        """Combine with statistics gathered elsewhere (another batch, process or machine)."""
        if other.dim != self.dim:
            raise ValueError(f"cannot merge dims {self.dim} and {other.dim}")
        return CovarianceStats(self.dim, self.count + other.count, self.total + other.total, self.outer + other.outer)

    @property
    def mean(self) -> np.ndarray:
        self._require_data()
        return self.total / self.count

    @property
    def covariance(self) -> np.ndarray:
        """Population covariance E[xx^T] - mu mu^T, symmetrized against rounding."""
        self._require_data()
        mu = self.mean
        cov = self.outer / self.count - np.outer(mu, mu)
        return (cov + cov.T) / 2

    def _require_data(self) -> None:
        if self.count < 2:
            raise ValueError(f"need at least 2 vectors to fit a correction, got {self.count}")
