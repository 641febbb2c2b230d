"""Applying a correction: the affine map (after the flow, when there is one) and the pooling weights of SIF.

This is the one place that knows a correction may pool its own way: SIF's token weights change how a
text is pooled, so its vectors come from encoding the texts again, not from the stored raw vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from app.correction.artifact import CorrectionArtifact
from app.correction.flow import Flow
from app.correction.sif import WEIGHTS_KEY as SIF_WEIGHTS

# texts, token weights (None: the backbone's own pooling) -> raw float32 vectors
Encode = Callable[[Sequence[str], np.ndarray | None], np.ndarray]


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Unit rows; a zero row stays zero instead of becoming NaN."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, 1e-12)


class Correction:
    """Applies an artifact to whole batches in one matrix product, then normalizes."""

    def __init__(self, artifact: CorrectionArtifact):
        self.artifact = artifact
        self._mu = artifact.mu
        self._W = artifact.W
        self._flow = Flow.from_arrays(artifact.arrays)
        self.token_weights: np.ndarray | None = artifact.arrays.get(SIF_WEIGHTS)  # pooling weights (SIF), if any

    @property
    def id(self) -> str:
        return self.artifact.id

    @property
    def dim(self) -> int:
        return self.artifact.out_dim

    @property
    def has_flow(self) -> bool:
        return self._flow is not None

    def apply(self, x: np.ndarray, *, normalize: bool = True) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32) if self._flow is None else self._flow.forward(x)
        y = (x - self._mu) @ self._W
        return l2_normalize(y) if normalize else y


def project(raw: np.ndarray, correction: Correction | None, *, normalize: bool = True) -> np.ndarray:
    """Vectors in a correction's space; with no correction, the raw vectors (unit rows when normalized)."""
    if correction is None:
        return l2_normalize(raw) if normalize else raw
    return correction.apply(raw, normalize=normalize)


def pooling_weights(correction: Correction | None) -> np.ndarray | None:
    """The token weights texts must be pooled with to land in `correction`'s space (SIF's), else None."""
    return correction.token_weights if correction is not None else None


def corrected(
    encode: Encode,
    correction: Correction | None,
    texts: Sequence[str],
    raw: np.ndarray | None = None,
    *,
    normalize: bool = True,
) -> np.ndarray:
    """`texts` in `correction`'s space: their `raw` vectors corrected, or, when `raw` is not given or the
    correction pools its own way, the texts encoded for it first."""
    weights = pooling_weights(correction)
    if raw is None or weights is not None:
        raw = encode(texts, weights)
    return project(raw, correction, normalize=normalize)
