"""SIF (Arora et al., ICLR 2017): frequent tokens weigh less in the pooling, then the common component goes.

The token weights change how a text's token vectors are averaged, so the backbone applies them while
pooling (`encode(texts, token_weights=...)`); what is left for the affine stage is the removal of the
first principal component, `y = x - u u^T x`, which fits the artifact's `(x - mu) @ W` as it is.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

WEIGHTS_KEY = "sif.weights"  # the artifact array holding one weight per token id
DEFAULT_A = 1e-3


def token_counts(token_ids: Iterable[Iterable[int]], vocab_size: int) -> np.ndarray:
    """How often each token id occurs in a tokenized corpus."""
    flat = np.fromiter((i for ids in token_ids for i in ids), dtype=np.int64)
    return np.bincount(flat, minlength=vocab_size)


def sif_weights(counts: np.ndarray, a: float = DEFAULT_A) -> np.ndarray:
    """a / (a + p(w)) with p(w) the token's frequency in the corpus; an unseen token weighs 1."""
    if a <= 0:
        raise ValueError(f"a must be positive, got {a}")
    total = counts.sum()
    if total <= 0:
        raise ValueError("the corpus has no tokens to count")
    weights: np.ndarray = (a / (a + counts / total)).astype(np.float32)
    return weights


def remove_first_component(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mu, W) of x -> x - u u^T x, u the first singular vector of the (uncentred) pooled vectors."""
    x = np.asarray(vectors, dtype=np.float64)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    u = vt[0]
    return np.zeros(x.shape[1]), np.eye(x.shape[1]) - np.outer(u, u)
