"""One search as a request asks it: built once (at the route, or by a command) and read down the whole search path,
so that what a search may ask is written in one place and checked there."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

import numpy as np

from app.core.errors import InvalidInput
from app.index.metadata_filter import Filter, parse

DEPTH_PER_K = 10  # pages reach offset + k <= DEPTH_PER_K * CE_MAX_K: how deep a ranking is ever read
VectorSpace = Literal["search", "raw"]  # the collection's search space, or the backbone's (mapped by the server)
RANKING_FIELDS = ("mode", "fusion", "lexical_weight", "rrf_k", "candidates", "feedback_docs", "feedback_weight")


@dataclass(frozen=True)
class Diversity:
    """Maximal marginal relevance over the first `fetch` results (index/mmr)."""

    weight: float = 0.5  # lambda: 1 is relevance alone, 0 diversity alone
    fetch: int = 50  # results re-ordered, the page's own included


@dataclass(frozen=True)
class SearchQuery:
    """A query text, a vector or both (or a stored document to find more like); how many results from where; which
    documents; how to rank them."""

    text: str | None = None
    k: int = 10
    vector: np.ndarray | None = field(default=None, compare=False)  # one vector: searched instead of the text's
    vector_space: VectorSpace = "search"
    filter: Filter | None = None  # a request's JSON object is parsed here (FilterError when it cannot be)
    score_threshold: float | None = None
    offset: int = 0
    explain: bool = False
    include_vectors: bool = False  # each hit's best passage's vector, in the search space
    diversity: Diversity | None = None
    mode: str | None = None  # the ranking's fields (RANKING_FIELDS): None takes the collection's
    fusion: str | None = None
    lexical_weight: float | None = None
    rrf_k: int | None = None
    candidates: int | None = None
    feedback_docs: int | None = None
    feedback_weight: float | None = None
    like: str | None = None  # a stored document's id: its text and vector are the query, and it is left out

    def __post_init__(self) -> None:
        given: object = self.filter  # a caller's JSON object is taken too, parsed here
        if isinstance(given, Mapping):
            object.__setattr__(self, "filter", parse(given))
        if self.vector is not None:
            vector = np.asarray(self.vector, dtype=np.float32)
            object.__setattr__(self, "vector", vector.reshape(1, -1) if vector.ndim == 1 else vector)

    @property
    def words(self) -> str:
        """The text to encode: a query without a vector has one (SearchService refuses it otherwise)."""
        if self.text is None:
            raise InvalidInput("send q (a text), vector, or both")
        return self.text

    def asked(self) -> dict[str, Any]:
        """How the query asks to rank (None: as the collection does), as `ranking_choice.ranking_for` reads it."""
        return {name: getattr(self, name) for name in RANKING_FIELDS}

    @property
    def wanted(self) -> int:
        """Results found before the page is cut: the pages before it, and MMR's whole fetch."""
        return max(self.k + self.offset, self.diversity.fetch if self.diversity else 0)

    def describe(self) -> dict[str, Any]:
        """The query's fields as JSON would hold them (no vector), for logs and tests."""
        skip = {"vector", "filter", "diversity"}
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}


def max_search_depth(max_k: int) -> int:
    """How deep pages reach (offset + k) when one page holds at most `max_k` (CE_MAX_K)."""
    return DEPTH_PER_K * max_k
