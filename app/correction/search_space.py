"""The space search runs in, which may differ from the one /embed and /similarity serve.

A correction is tuned on sentence pairs; search is judged by retrieval (short queries, long documents,
NDCG and recall). An artifact may carry a second, linear map of the raw vectors for search (`search.mu`,
`search.W`); without one, search runs in the similarity correction's own space.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.core.names import Method

SEARCH_MU, SEARCH_W = "search.mu", "search.W"  # artifact arrays of the search map, when it has its own

# Raw vectors whose random pairs average a cosine below this are already centred (a contrastive model's own
# pooling): re-weighting their directions cost Recall@100 on the dev collections, so they are searched raw.
# Measured there (all-MiniLM-L6-v2, fitting corpus STS-B train): mean 0.03; first_last_avg 0.28,
# embedding_avg 0.33, CLS 0.53, where the similarity correction gained NDCG@10 and recall on all five.
CONE_COSINE = 0.1
DEFAULT_RULE = (
    f"no judgments: raw vectors when their random pairs average a cosine < {CONE_COSINE} (already centred), "
    "else the similarity correction's space"
)


@dataclass(frozen=True)
class SearchChoice:
    """The search map (None: the similarity correction's own) and the record /info shows of it."""

    method: str
    params: dict[str, Any]
    mu: np.ndarray | None = field(default=None, repr=False)
    W: np.ndarray | None = field(default=None, repr=False)
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def arrays(self) -> dict[str, np.ndarray]:
        """What the artifact stores for it: nothing when search shares the similarity space."""
        return {} if self.W is None or self.mu is None else {SEARCH_MU: self.mu, SEARCH_W: self.W}

    def describe(self) -> dict[str, Any]:
        dim = None if self.W is None else int(self.W.shape[1])
        return {
            "shared_with_similarity": self.W is None,
            "method": self.method,
            "params": self.params,
            "dim": dim,
            **self.record,
        }


def raw_space(dim: int, record: dict[str, Any]) -> SearchChoice:
    """Search on the backbone's own vectors: the identity map."""
    return SearchChoice(Method.NONE, {}, np.zeros(dim, dtype=np.float32), np.eye(dim, dtype=np.float32), record)


def default_search(method: str, params: dict[str, Any], dim: int, raw_mean_cosine: float) -> SearchChoice:
    """The documented choice without relevance judgments (see CONE_COSINE)."""
    record = {"rule": DEFAULT_RULE, "raw_mean_random_cosine": round(float(raw_mean_cosine), 4)}
    if method != Method.NONE and raw_mean_cosine < CONE_COSINE:
        return raw_space(dim, record)
    return SearchChoice(method, params, record=record)


def check_search_arrays(arrays: dict[str, Any], dim: int) -> str | None:
    """Why the stored search map cannot serve vectors of `dim`, or None when it can (or there is none)."""
    if (SEARCH_MU in arrays) != (SEARCH_W in arrays):
        return f"{SEARCH_MU} and {SEARCH_W} go together"
    if SEARCH_W not in arrays:
        return None
    mu, W = arrays[SEARCH_MU], arrays[SEARCH_W]
    if mu.shape != (dim,) or W.ndim != 2 or W.shape[0] != dim or W.shape[1] < 1:
        return f"{SEARCH_MU} {mu.shape} and {SEARCH_W} {W.shape} are not the shape of a map from dim {dim}"
    return None
