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
    next_cursor: str | None = None  # the page after these hits (`cursor=`), None after the last

    def relevances(self) -> list[float]:
        """Each hit's relevance in [0, 1], never rising down the results: its rank score mapped by how the server
        ranked (dense: (cosine + 1) / 2; lexical: BM25 / (1 + BM25); hybrid: the fused score, rrf's times rrf_k + 1),
        and no higher than the hit before it (MMR re-orders by more than relevance)."""
        mode, fusion = self.ranking.get("mode"), self.ranking.get("fusion")
        out: list[float] = []
        for hit in self.hits:
            score = hit.rank_score
            if mode == "dense":
                score = (score + 1.0) / 2.0
            elif mode == "lexical":
                score = score / (1.0 + score)
            elif fusion == "rrf":
                score = score * ((self.ranking.get("rrf_k") or 60) + 1)
            out.append(min(max(score, 0.0), 1.0, out[-1] if out else 1.0))
        return out

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> SearchResult:
        hits = [SearchHit(**{k: h.get(k) for k in SearchHit.__dataclass_fields__}) for h in body["results"]]
        partial, cursor = body.get("partial", False), body.get("next_cursor")
        return cls(body["query"], hits, body["ranking"], body.get("correction"), partial, cursor)


@dataclass(frozen=True)
class Tokens:
    """A text as the server's backbone tokenizes it: its tokens, their count, and whether they were cut."""

    tokens: list[str]
    count: int
    truncated: bool
