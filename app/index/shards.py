"""A collection split by document id into shards: which shard holds a document, and one top-k from theirs."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.store.keys import shard_of


@dataclass(frozen=True)
class Shard:
    """Shard `number` of `count`: it holds the documents whose id hashes to it (all passages of each)."""

    number: int
    count: int

    def __post_init__(self) -> None:
        if not 0 <= self.number < self.count:
            raise ValueError(f"shard {self.number} of {self.count} does not exist")

    @property
    def name(self) -> str:
        return f"shard{self.number}of{self.count}"

    def holds(self, doc_id: str) -> bool:
        return shard_of(doc_id, self.count) == self.number

    def held(self, doc_ids: Iterable[str]) -> list[str]:
        return [d for d in doc_ids if self.holds(d)]


def merged(per_shard: Sequence[Sequence[tuple[str, float]]], k: int) -> list[tuple[str, float]]:
    """The top-k (id, score) of disjoint shards' own top-k lists, best first (ties by id, so the order is stable)."""
    return heapq.nsmallest(k, (hit for hits in per_shard for hit in hits), key=lambda hit: (-hit[1], hit[0]))
