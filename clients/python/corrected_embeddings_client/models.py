"""What the client returns: plain frozen dataclasses, built from the server's JSON by name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Document:
    """A stored document; `id` None when adding lets the server name it (a hash of the text)."""

    text: str
    id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"text": self.text, "metadata": self.metadata}
        return body if self.id is None else {"id": self.id, **body}


@dataclass(frozen=True)
class SearchHit:
    """One result: `score` is the cosine in the corrected space, `rank_score` what ordered the list."""

    id: str
    text: str
    score: float
    rank_score: float
    metadata: dict[str, Any]
    lexical_score: float | None = None
    passage: dict[str, Any] | None = None
    explain: dict[str, Any] | None = None
    vector: list[float] | None = None


@dataclass(frozen=True)
class SearchResult:
    """The hits, with how they were ranked (`ranking`) and whether a shard was missing (`partial`)."""

    query: str | None
    hits: list[SearchHit]
    ranking: dict[str, Any]
    correction: str | None
    partial: bool

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> SearchResult:
        hits = [SearchHit(**{k: h.get(k) for k in SearchHit.__dataclass_fields__}) for h in body["results"]]
        return cls(body["query"], hits, body["ranking"], body.get("correction"), body.get("partial", False))


@dataclass(frozen=True)
class Tokens:
    """A text as the server's backbone tokenizes it: its tokens, their count, and whether they were cut."""

    tokens: list[str]
    count: int
    truncated: bool
