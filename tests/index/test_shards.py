"""Shards of a collection, built from the real store: each holds its documents only, follows the change log for
them alone, snapshots apart, and their merged top-k is the whole index's."""

import numpy as np
import pytest

from app.core.stored_vectors import to_stored
from app.index.builder import IndexBuilder
from app.index.key_index import SHARDED
from app.index.live import LiveIndex
from app.index.search_index import dense_hits
from app.index.shards import Shard, merged, shard_of
from app.store.documents import DocumentRecord

DIM, KEY = 16, "sharded"


def put(store, ids, rng):
    vectors = rng.standard_normal((len(ids), DIM)).astype(np.float32)
    stored = [to_stored(v[None, :]) for v in vectors]
    records = [
        DocumentRecord(d, f"text {d}", "{}", blob, vector_dtype=dtype)
        for d, (blob, dtype) in zip(ids, stored, strict=True)
    ]
    return store.documents.put(KEY, records)


def test_a_document_always_lands_on_the_same_shard_and_shards_are_balanced():
    assert [shard_of("doc-1", 4), shard_of("doc-2", 4), shard_of("doc-3", 4)] == [2, 1, 2]  # fixed, in any process
    counts = np.bincount([shard_of(f"d{i}", 4) for i in range(20_000)], minlength=4)
    assert counts.min() > 4_500 and counts.max() < 5_500, counts
    assert Shard(2, 4).held(["doc-1", "doc-3", "x"]) == [d for d in ["doc-1", "doc-3", "x"] if shard_of(d, 4) == 2]
    with pytest.raises(ValueError):
        Shard(4, 4)


def test_merging_keeps_the_best_k_of_every_shard_with_ties_by_id():
    lists = [[("a", 0.9), ("b", 0.5)], [("c", 0.7), ("d", 0.5)], []]
    assert merged(lists, 3) == [("a", 0.9), ("c", 0.7), ("b", 0.5)]
    assert merged(lists, 10) == [("a", 0.9), ("c", 0.7), ("b", 0.5), ("d", 0.5)]


def test_shards_hold_their_documents_follow_their_changes_and_merge_to_the_whole_index(store, tmp_path):
    rng = np.random.default_rng(0)
    put(store, [f"d{i}" for i in range(2_000)], rng)
    whole = IndexBuilder(store, KEY, DIM, factory="Flat").build(None)
    shards = [IndexBuilder(store, KEY, DIM, factory="Flat", shard=Shard(n, 4)) for n in range(4)]
    built = [b.build(None) for b in shards]
    assert [b.documents for b in built] == [b.stored_count() for b in shards]
    assert sum(b.documents for b in built) == 2_000 and min(b.documents for b in built) > 400
    assert all(Shard(n, 4).holds(key) for n, b in enumerate(built) for key in b.dense._doc_of if key)

    queries = rng.standard_normal((50, DIM)).astype(np.float32)
    for q in queries:
        expected, _ = dense_hits(whole, q[None, :], 10, None)
        found = merged([dense_hits(b, q[None, :], 10, None)[0] for b in built], 10)
        assert [d for d, _ in found] == [d for d, _ in expected]

    put(store, ["d0", "new-1", "new-2"], rng)  # one rewritten, two new
    store.documents.delete(KEY, ["d1"])
    for builder, index in zip(shards, built, strict=True):
        builder.catch_up(index)
    assert sum(b.documents for b in built) == 2_001
    assert [("new-1" in b.dense, "d1" in b.dense) for b in built] == [
        (shard_of("new-1", 4) == n, False) for n in range(4)
    ]


def test_a_shard_reopens_from_its_own_snapshot_and_never_from_another_shards(store, tmp_path):
    put(store, [f"d{i}" for i in range(300)], np.random.default_rng(1))

    def live(n):
        builder = IndexBuilder(store, KEY, DIM, factory="Flat", shard=Shard(n, 2))
        return LiveIndex(
            builder, None, published=lambda _: None, snapshot_dir=tmp_path, follow_interval=60, snapshot_interval=60
        )

    first = live(0)
    documents = first.current.documents
    first.close()  # writes shard 0's snapshot
    again, other = live(0), live(1)
    try:
        assert again.opened["from"] == "snapshot" and again.current.documents == documents
        assert other.opened["from"] == "store" and other.current.documents == 300 - documents
    finally:
        again.close()
        other.close()


def test_a_sharded_servers_index_keeps_the_keys_alone_and_a_snapshot_of_its_own_kind(store, tmp_path):
    put(store, [f"d{i}" for i in range(300)], np.random.default_rng(2))

    def live(factory):
        return LiveIndex(
            IndexBuilder(store, KEY, DIM, factory=factory),
            None,
            published=lambda _: None,
            snapshot_dir=tmp_path,
            follow_interval=60,
            snapshot_interval=60,
        )

    keys = live(SHARDED)
    assert (keys.current.documents, keys.current.dense.memory_bytes(), keys.opened["from"]) == (300, 0, "store")
    with pytest.raises(RuntimeError, match="shards"):
        keys.current.dense.search(np.zeros((1, DIM), dtype=np.float32), 10)
    store.documents.delete(KEY, ["d1"])
    keys.builder.catch_up(keys.current)
    assert keys.current.documents == 299 and "d1" not in keys.current.dense
    keys.close()  # its snapshot: the keys

    again, flat = live(SHARDED), None
    try:
        assert (again.opened["from"], again.current.documents) == ("snapshot", 299)
        again.close()
        flat = live("Flat")  # CE_SHARDS unset again: the keys alone cannot serve; built from the store
        assert flat.opened == {
            "from": "store",
            "snapshot_refused": "index shards, settings Flat",
            "seconds": flat.opened["seconds"],
        }
        assert len(flat.current.dense.search(np.ones((1, DIM), dtype=np.float32), 5)[0]) == 5
    finally:
        if flat is not None:
            flat.close()


def test_a_sharded_server_never_decodes_vectors_its_shards_compute(store):
    odd = DocumentRecord("odd", "a text", "{}", b"\x00" * 3)  # bytes no vector decodes from: never read here
    store.documents.put(KEY, [odd])
    builder = IndexBuilder(store, KEY, DIM, factory=SHARDED)
    index = builder.build(None)
    builder.apply(index, [odd])
    assert index.documents == 1 and "odd" in index.dense
    whole = IndexBuilder(store, KEY, DIM, factory="Flat").build(None)  # decodes: the record is left out, not a crash
    assert whole.documents == 0 and "odd" not in whole.dense
