"""How a filtered dense search runs, chosen by the share of the index the filter lets through: a large share is
searched unfiltered, deeper, and the hits outside it dropped (no selector of hundreds of thousands of ids built per
query); a small share goes through FAISS's id selector with the probe (or beam) widened by 1/sqrt(share), and
through every list if that still found too few."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Container, Sequence, Sized

POST_FILTER_SHARE = 0.05  # at and above it, search unfiltered and drop what the filter does not let through
SLACK = 1.5  # post-filtering: how many more candidates than the share predicts

Hits = list[tuple[str, float]]


def share_of(allowed: Sized, size: int) -> float:
    return len(allowed) / max(size, 1)


def post_filter_depth(want: int, share: float, size: int) -> int:
    """Unfiltered candidates to read so that `want` of them are likely within a filter letting `share` through."""
    return min(size, math.ceil(want / share * SLACK) + 16)


def widening(share: float) -> float:
    """How much wider a selector's probe or beam goes for a filter letting `share` of the index through."""
    return 1.0 / math.sqrt(max(share, 1e-12))


def kept(rows: Sequence[Hits], allowed: Container[str], want: int) -> list[Hits] | None:
    """Each row's first `want` hits the filter lets through; None when a row kept fewer (search it filtered)."""
    out = [[hit for hit in row if hit[0] in allowed][:want] for row in rows]
    return out if all(len(row) >= want for row in out) else None


def post_filtered(
    search: Callable[[int], list[Hits]], allowed: Collection[str], want: int, size: int
) -> list[Hits] | None:
    """A filter letting a large share through: `search` (unfiltered, to a depth) read deep enough to keep `want`
    hits of each query; None for a small share, or when a query kept fewer."""
    if (share := share_of(allowed, size)) < POST_FILTER_SHARE:
        return None
    return kept(search(post_filter_depth(want, share, size)), allowed, want)
