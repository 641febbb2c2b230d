"""Where a search's lexical list comes from, behind one interface: the collection's own BM25 index (here), or its
shards' (a collection created with `shards: N`: `shards.fanout.ShardedLexical`), scored with global statistics."""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from app.core.tracing import span
from app.index.search_index import SearchIndex

LexicalList = tuple[list[tuple[str, float]], dict[str, float]]  # (id, BM25) best first; each hit's share of idf


class LexicalSource(Protocol):
    def search(
        self, index: SearchIndex, query: str, depth: int, allowed: Collection[str] | None = None, where=None
    ) -> LexicalList: ...


class LocalLexical:
    """The collection's own lexical index (none in a writer: no list)."""

    def search(
        self, index: SearchIndex, query: str, depth: int, allowed: Collection[str] | None = None, where=None
    ) -> LexicalList:
        if index.lexical is None:
            return [], {}
        with span("index.lexical_search", depth=depth):
            return index.lexical.search_covered(query, depth, allowed=allowed)
