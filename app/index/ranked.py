"""One ranking of a query, read to any depth: what every page is cut from, so that pages concatenated equal one
request for the whole depth. Hybrid fusion weighs each list's top `candidates` (the window, a depth fixed per query:
min-max scales would move with a depth that grew with the page); past the window the documents follow the dense
list's order, at rank score 0. A single-list mode is that list."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.index.ties import Hits

TAIL_SCORE = 0.0  # past the fused window: below or equal to every fused score (each part is at least 0)


@dataclass
class RankedList:
    """`head` (the fused window, best first; empty for one list) then `source`'s order read as deep as asked, less
    the head and `leave_out` (a document searched like), at `tail_score` when fused. `source(depth)` is the list's
    top `depth`, ties by id, so a shallow read is a prefix of a deep one; `read` is what it last gave, `depth` how
    deep that was asked."""

    source: Callable[[int], Hits]
    read: Hits = ()
    depth: int = 0
    head: Hits = ()
    leave_out: str | None = None
    tail_score: float | None = None  # what the tail's documents are ranked at (None: the source's own scores)
    _skip: set[str] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        self._skip = {doc_id for doc_id, _ in self.head} | ({self.leave_out} if self.leave_out is not None else set())

    def first(self, n: int) -> list[tuple[str, float]]:
        """The ranking's first n (fewer when the collection holds fewer)."""
        if n <= len(self.head):
            return list(self.head[:n])
        need = n + len(self._skip)  # the tail's n - len(head), past at most every skipped document
        if need > self.depth and len(self.read) >= self.depth:  # read deeper, unless the list has already ended
            self.read, self.depth = self.source(need), need
        score = self.tail_score
        tail = [(d, s if score is None else score) for d, s in self.read if d not in self._skip]
        return [*self.head, *tail][:n]
