"""Applying a correction: the affine map (after the flow, when there is one) and the pooling weights of SIF.

This is the one place that knows a correction may pool its own way: SIF's token weights change how a
text is pooled, so its vectors come from encoding the texts again, not from the stored raw vectors.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from app.correction.artifact import CorrectionArtifact
from app.correction.flow import Flow
from app.correction.search_space import SEARCH_MU, SEARCH_W
from app.correction.sif import WEIGHTS_KEY as SIF_WEIGHTS


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Unit rows; a zero row stays zero instead of becoming NaN."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    unit: np.ndarray = x / np.maximum(norms, 1e-12)
    return unit


class Correction:
    """Applies an artifact to whole batches in one matrix product, then normalizes."""

    def __init__(self, artifact: CorrectionArtifact, *, for_search: bool = False):
        self.artifact = artifact
        self.for_search = for_search and SEARCH_W in artifact.arrays
        self.token_weights: np.ndarray | None = None  # pooling weights (SIF), if any
        if self.for_search:  # search's own map: linear, on the backbone's own vectors
            self._mu, self._W = artifact.arrays[SEARCH_MU], artifact.arrays[SEARCH_W]
            self._flow = None
        else:
            self._mu, self._W = artifact.mu, artifact.W
            self._flow = Flow.from_arrays(artifact.arrays)
            self.token_weights = artifact.arrays.get(SIF_WEIGHTS)
        identity = self._W.shape[0] == self._W.shape[1] and not self._mu.any() and self._flow is None
        self._identity = identity and np.array_equal(self._W, np.eye(len(self._W), dtype=self._W.dtype))

    @property
    def id(self) -> str:
        return self.artifact.id

    @property
    def dim(self) -> int:
        return int(self._W.shape[1])

    @functools.cached_property
    def search(self) -> Correction:
        """The map search uses: the artifact's own map for search when it has one, else this one."""
        return Correction(self.artifact, for_search=True) if SEARCH_W in self.artifact.arrays else self

    def describe_search(self) -> dict[str, Any]:
        """Which space search runs in, for /info, /search and the page."""
        shared = {"shared_with_similarity": True, "method": self.artifact.method, "params": self.artifact.params}
        return {**shared, **self.artifact.extra.get("search", {}), "correction": self.id, "dim": self.search.dim}

    @property
    def has_flow(self) -> bool:
        return self._flow is not None

    def apply(self, x: np.ndarray, *, normalize: bool = True) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32) if self._flow is None else self._flow.forward(x)
        y = x if self._identity else (x - self._mu) @ self._W
        return l2_normalize(y) if normalize else y


def project(raw: np.ndarray, correction: Correction | None, *, normalize: bool = True) -> np.ndarray:
    """Vectors in a correction's space; with no correction, the raw vectors (unit rows when normalized)."""
    if correction is None:
        return l2_normalize(raw) if normalize else raw
    return correction.apply(raw, normalize=normalize)


def pooling_weights(correction: Correction | None) -> np.ndarray | None:
    """The token weights texts must be pooled with to land in `correction`'s space (SIF's), else None."""
    return correction.token_weights if correction is not None else None
