"""Top-k lists whose cut never falls inside a run of equal scores: an index breaks ties by where it stored a document,
so two depths could keep different members of one run. Read deeper until the run ends, then cut by (score, id): the
top k is then a prefix of the top k + n, and pages of one ranking never repeat or skip a document."""

from __future__ import annotations

from collections.abc import Sequence

Hits = Sequence[tuple[str, float]]


def decided(scores: Sequence[float], depth: int, asked: int) -> bool:
    """Whether a list read `asked` deep (best first) settles its top `depth`: it ran out, or its last score is below
    the depth-th (no unread entry can tie it)."""
    return len(scores) < asked or (len(scores) > depth and scores[-1] < scores[depth - 1])


def cut(hits: Hits, depth: int) -> list[tuple[str, float]]:
    """The first `depth` hits by score, equal scores in the order of their ids."""
    return sorted(hits, key=lambda hit: (-hit[1], hit[0]))[:depth]
