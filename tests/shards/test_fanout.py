"""A query fanned out to every shard: their lists merged by score, a shard that does not answer in time named
(`partial`), never silently left out; none answering is a 503. The real shards on Ray: test_deployment.py."""

from __future__ import annotations

import time

import numpy as np
import pytest

from app.core.errors import NotReady
from app.index.faiss_index import VectorIndex
from app.index.filters import FieldIndex
from app.index.passages import passage_key
from app.index.search_index import SearchIndex
from app.shards.fanout import ShardedDense, ShardedHits, ShardedSearch, StoredDocuments


class Answer:
    """What a Serve handle's call returns: a result within a timeout, or cancelled."""

    def __init__(self, value=None, delay: float = 0.0, error: Exception | None = None):
        self.value, self.delay, self.error, self.cancelled = value, delay, error, False

    def result(self, timeout_s: float):
        if self.error or self.delay > timeout_s:
            time.sleep(min(self.delay, timeout_s))
            raise self.error or TimeoutError("no answer in time")
        return self.value

    def cancel(self):
        self.cancelled = True


class Shard:
    """A shard's handle: `handle.search.remote(...)`, as Ray Serve's."""

    def __init__(self, answer: Answer):
        self.answer, self.asked = answer, []
        self.search = self

    def remote(self, *args):
        self.asked.append(args)
        return self.answer


def test_the_lists_are_merged_by_score_and_a_slow_or_failed_shard_is_named():
    shards = [
        Shard(Answer(([("a", 0.9), ("b", 0.5)], {"a": 2, "b": 0}, 40))),
        Shard(Answer(([("c", 0.7)], {"c": 1}, 30), delay=5.0)),
        Shard(Answer(error=RuntimeError("the replica died"))),
        Shard(Answer(([("d", 0.8)], {"d": 0}, 20))),
    ]
    found = ShardedSearch(shards, timeout=0.2).search(np.ones((1, 4)), 3, "whitening-0123456789ab", {"k": "v"})
    assert found.hits == [("a", 0.9), ("d", 0.8), ("b", 0.5)] and found.best == {"a": 2, "d": 0, "b": 0}
    assert found.missing == [1, 2] and found.partial and shards[1].answer.cancelled and found.held == 60
    assert shards[0].asked[0][1:] == (3, "whitening-0123456789ab", {"k": "v"})  # in the query's space, filtered


def test_none_answering_is_a_503_and_the_dense_source_passes_the_rest_on():
    index = SearchIndex(None, VectorIndex(4, "Flat"), FieldIndex())
    silent = ShardedDense(ShardedSearch([Shard(Answer(error=RuntimeError("down")))], timeout=0.1))
    with pytest.raises(NotReady, match="no shard"):
        silent.search(index, np.ones((1, 4)), 5)
    half = ShardedDense(ShardedSearch([Shard(Answer(([("a", 0.5)], {"a": 0}, 1))), Shard(Answer(error=OSError()))]))
    found = half.search(index, np.ones((1, 4)), 5)
    assert found.hits == [("a", 0.5)] and found.missing == [1] and found.stored is None


class Lagging:
    """Shards that hold `held` documents, and count how often the scale was measured on them."""

    def __init__(self, held: int):
        self.held, self.measured, self.handles = held, 0, [None]

    def search(self, vector, depth, correction_id=None, where=None) -> ShardedHits:
        return ShardedHits([("d0", 0.9)], {"d0": 0}, [], self.held)

    def neighbours(self, vectors, depth, correction_id=None):
        self.measured += 1
        return [[(passage_key(f"d{i}", 0), 1.0), (passage_key(f"d{(i + 1) % 8}", 0), 0.5)] for i in range(len(vectors))]


class Stored:
    def exact_vectors(self, correction, dim):
        return lambda keys: np.eye(8, dim)[: len(keys)]


def test_the_scale_is_measured_only_on_shards_that_hold_what_the_store_holds():
    index = SearchIndex(None, VectorIndex(4, "Flat"), FieldIndex())
    stored = StoredDocuments(lambda: iter([[f"d{i}" for i in range(8)]]), lambda: 8, Stored())
    shards = Lagging(held=5)
    dense = ShardedDense(shards, stored)
    dense.search(index, np.ones((1, 4)), 5)
    assert dense.scale(index) is None and shards.measured == 0  # still following: nothing measured, nothing kept
    shards.held = 8
    dense.search(index, np.ones((1, 4)), 5)
    scale = dense.scale(index)
    assert scale is not None and shards.measured > 0
    measured = shards.measured
    assert dense.scale(index) is scale and shards.measured == measured  # kept until the collection changes
