"""How a filtered dense search runs, chosen by the share of the index the filter lets through: a large share is
searched unfiltered, deeper, and the hits outside it dropped (no selector of hundreds of thousands of ids built per
query); a few documents are scored exactly, their vectors reconstructed by id (an IVF index's hash table); between
the two, FAISS's id selector with the probe (or beam) widened by 1.5/sqrt(share), every list if that found too few."""

from __future__ import annotations

import itertools
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Container, Hashable, Iterator, Mapping, Sequence, Set, Sized

import faiss
import numpy as np

POST_FILTER_SHARE = 0.05  # at and above it, search unfiltered and drop what the filter does not let through
EXACT_LIMIT = 512  # vectors at most scored exactly (reconstructing 10,000 by id took 11 ms; 100, 0.14 ms)
CACHED_FILTERS = 16  # filters whose FAISS labels an index keeps (10,000 ids took 11-24 ms to look up)
SLACK = 1.5  # post-filtering: how many more candidates than the share predicts

Hits = list[tuple[str, float]]


def share_of(allowed: Sized, size: int) -> float:
    return len(allowed) / max(size, 1)


def post_filter_depth(want: int, share: float, size: int) -> int:
    """Unfiltered candidates to read so that `want` of them are likely within a filter letting `share` through."""
    return min(size, math.ceil(want / share * SLACK) + 16)


def widening(share: float) -> float:
    """How much wider a selector's probe or beam goes for a filter letting `share` of the index through."""
    return 1.5 / math.sqrt(max(share, 1e-12))


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


def labels_of(label_of: Mapping[str, int], allowed: Collection[str]) -> np.ndarray:
    """The FAISS labels of the allowed keys the index holds (one pass in C: no Python loop per key)."""
    keys = tuple(allowed)
    labels = np.fromiter(map(label_of.get, keys, itertools.repeat(-1)), dtype=np.int64, count=len(keys))
    return labels[labels >= 0]


def exact_within(
    index: faiss.Index, labels: np.ndarray, queries: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """(scores, labels) of each query's top-k among `labels`, scored on their vectors reconstructed by id, as
    FAISS's own search answers; None when this index cannot reconstruct by id."""
    try:
        vectors = index.reconstruct_batch(labels)
    except RuntimeError:  # no hash table of ids (Flat and HNSW behind an id map, fast-scan lists)
        return None
    scores = queries @ vectors.T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, order, axis=1), labels[order]


def rows_of(doc_of: Sequence[str | None], scores: np.ndarray, labels: np.ndarray) -> list[Hits]:
    """FAISS's answer as (key, score) rows, best first; empty places (-1) and removed keys left out."""
    return [
        [(doc_of[lab], float(s)) for s, lab in zip(row_s, row_l, strict=True) if lab >= 0 and doc_of[lab]]
        for row_s, row_l in zip(scores.tolist(), labels.tolist(), strict=True)
    ]


class Allowed:
    """The ids a filter selects, and a key naming the filter and the state of the field index it was read in: the
    same key, the same ids, so the FAISS labels made from them can be kept for the next query."""

    def __init__(self, ids: Set[str], key: Hashable):
        self.ids, self.key = ids, key

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.ids

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)


class LabelCache:
    """The FAISS labels of recent filters' ids and the selector made of them, for one state of the index's labels: a
    filter repeated (a tenant's, a language's) is looked up and hashed once, not at every query."""

    def __init__(self) -> None:
        self._held: OrderedDict[Hashable, tuple[np.ndarray, faiss.IDSelector]] = OrderedDict()
        self._lock = threading.Lock()

    def selector(
        self, label_of: Mapping[str, int], allowed: Collection[str], version: int
    ) -> tuple[np.ndarray, faiss.IDSelector]:
        key = getattr(allowed, "key", None)
        with self._lock:
            found = self._held.get((key, version)) if key is not None else None
        if found is None:
            labels = labels_of(label_of, allowed)
            found = (labels, faiss.IDSelectorBatch(labels))
            if key is not None:
                with self._lock:
                    self._held[(key, version)] = found
                    while len(self._held) > CACHED_FILTERS:
                        self._held.popitem(last=False)
        return found
