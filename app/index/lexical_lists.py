"""Where a search's lexical list comes from, behind one interface: the collection's own BM25 index (here), or its
shards' (a collection created with `shards: N`: `shards.fanout.ShardedLexical`), scored with global statistics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from app.core.tracing import span
from app.index.dense_lists import EVERY, Scope
from app.index.search_index import SearchIndex


@dataclass(frozen=True)
class LexicalList:
    """Documents by BM25, best first, each one's share of the query's idf, and the shards that did not answer."""

    hits: list[tuple[str, float]] = field(default_factory=list)
    coverage: dict[str, float] = field(default_factory=dict)
    missing: list[int] = field(default_factory=list)


class LexicalSource(Protocol):
    def search(self, index: SearchIndex, query: str, depth: int, scope: Scope = EVERY) -> LexicalList: ...


class LocalLexical:
    """The collection's own lexical index (none in a writer: no list)."""

    def search(self, index: SearchIndex, query: str, depth: int, scope: Scope = EVERY) -> LexicalList:
        if index.lexical is None:
            return LexicalList()
        with span("index.lexical_search", depth=depth):
            return LexicalList(*index.lexical.search_covered(query, depth, allowed=scope.allowed))
