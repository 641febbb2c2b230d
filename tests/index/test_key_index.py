"""A sharded server's dense index: the passage keys alone (its shards hold the vectors), kept like any index's."""

from __future__ import annotations

import pytest

from app.index.key_index import KeyIndex


def test_keys_are_upserted_removed_and_survive_a_snapshot():
    index = KeyIndex(384, correction_id="whitening-0123456789ab")
    index.upsert(["a", "b", "b\x1f1"])
    index.add(["c"])
    assert len(index) == 4 and "b\x1f1" in index and index.finish() is index
    assert index.remove(["a", "zz"]) == 1 and sorted(index.keys()) == ["b", "b\x1f1", "c"]
    data, meta = index.state()
    again = KeyIndex.from_state(data, meta)
    assert sorted(again.keys()) == sorted(index.keys()) and again.describe() == index.describe()
    assert index.memory_bytes() == 0 and index.rebuild_reason() is None


def test_searching_it_says_where_the_vectors_are():
    with pytest.raises(RuntimeError, match="its shards"):
        KeyIndex(8).search(None, 10)
