"""The FAISS wrapper: exact cosine ranking, upsert replaces, delete removes, on every index kind."""

import numpy as np
import pytest

from app.correction.pipeline import l2_normalize
from app.index import VectorIndex
from app.index.factories import training_minimum

KINDS = ["Flat", "IVF8,Flat", "HNSW16"]


def unit(rows):
    return l2_normalize(np.asarray(rows, dtype=np.float32))


def test_search_ranks_by_cosine_and_matches_brute_force():
    rng = np.random.default_rng(0)
    x = unit(rng.standard_normal((500, 32)))
    index = VectorIndex(32)
    index.upsert([f"d{i}" for i in range(500)], x)
    q = unit(rng.standard_normal((3, 32)))
    results = index.search(q, 10)
    for row, hits in zip(q, results, strict=True):
        expected = np.argsort(-(x @ row))[:10]
        assert [h[0] for h in hits] == [f"d{i}" for i in expected]
        np.testing.assert_allclose([h[1] for h in hits], (x @ row)[expected], rtol=1e-5)


def test_upsert_replaces_and_remove_deletes():
    index = VectorIndex(2)
    index.upsert(["a", "b"], unit([[1, 0], [0, 1]]))
    index.upsert(["a"], unit([[-1, 0]]))  # same id: replaced, not duplicated
    assert len(index) == 2
    assert index.search(unit([[1, 0]]), 5)[0][0][0] == "b"
    assert index.remove(["a", "zzz"]) == 1
    assert "a" not in index and "b" in index
    assert [h[0] for h in index.search(unit([[1, 0]]), 5)[0]] == ["b"]


def test_empty_index_and_k_larger_than_size():
    index = VectorIndex(4)
    assert index.search(unit([[1, 0, 0, 0]]), 10) == [[]]
    index.upsert(["only"], unit([[0, 1, 0, 0]]))
    assert len(index.search(unit([[1, 0, 0, 0]]), 10)[0]) == 1


def test_shape_errors_are_clear():
    index = VectorIndex(4)
    with pytest.raises(ValueError, match="shape"):
        index.upsert(["a"], np.zeros((1, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="duplicate"):
        index.upsert(["a", "a"], np.zeros((2, 4), dtype=np.float32))


def clustered(n, dim=32, seed=0):
    """Unit vectors around the same few dozen centres whatever the seed: structure an approximate index can use."""
    centres = np.random.default_rng(12345).standard_normal((40, dim))
    rng = np.random.default_rng(seed)
    return unit(centres[rng.integers(0, 40, n)] + 0.6 * rng.standard_normal((n, dim)))


@pytest.mark.parametrize("factory", KINDS)
def test_every_kind_upserts_deletes_and_filters(factory):
    x = clustered(400)
    ids = [f"d{i}" for i in range(400)]
    index = VectorIndex.build(32, ids, x, factory=factory)
    assert len(index) == 400 and index.factory == factory
    query = x[:1]
    assert index.search(query, 1)[0][0][0] == "d0"
    index.upsert(["d0"], unit(-x[:1]))  # moved far away: replaced, not duplicated
    assert len(index) == 400 and "d0" not in [h[0] for h in index.search(query, 10)[0]]
    assert index.remove(["d1", "nope"]) == 1 and "d1" not in index
    assert all(h[0] != "d1" for h in index.search(x[1:2], 50)[0])
    allowed = {"d5", "d77", "d300", "d1"}  # d1 is deleted: never returned
    hits = index.search(query, 10, allowed=allowed)[0]
    assert {h[0] for h in hits} == {"d5", "d77", "d300"}
    assert [h[1] for h in hits] == sorted((h[1] for h in hits), reverse=True)


def test_an_index_that_cannot_delete_in_place_uses_tombstones_and_asks_for_a_rebuild():
    x = clustered(100)
    index = VectorIndex.build(32, [f"d{i}" for i in range(100)], x, factory="HNSW16")
    index.remove([f"d{i}" for i in range(30)])
    assert index.dead == 30 and len(index) == 70
    assert "tombstones" in index.rebuild_reason()
    assert all(int(h[0][1:]) >= 30 for h in index.search(x[:5], 20)[0])


@pytest.mark.parametrize("factory", KINDS)
def test_state_round_trip_serves_the_same_results(factory):
    x = clustered(300)
    index = VectorIndex.build(32, [f"d{i}" for i in range(300)], x, factory=factory, correction_id="c1")
    index.remove(["d3"])
    data, meta = index.state()
    again = VectorIndex.from_state(data, meta)
    assert again.search(x[:5], 10) == index.search(x[:5], 10)
    assert (len(again), again.correction_id, again.params, again.dead) == (299, "c1", index.params, index.dead)
    again.upsert(["new"], -x[:1])  # a vector no other is near; labels continue after the restored ones
    assert again.search(-x[:1], 1)[0][0][0] == "new" and len(again) == 300
    assert again.search(x[:1], 1)[0][0][0] == "d0"


@pytest.mark.parametrize("factory", ["Flat", "IVF8,Flat"])
def test_churn_on_a_fixed_set_of_documents_keeps_memory_and_snapshots_flat(factory):
    """100,000 upserts and deletes on the same 200 ids: the id map and the snapshot stay the size they were."""
    rng = np.random.default_rng(0)
    ids = [f"d{i}" for i in range(200)]
    index = VectorIndex.build(16, ids, unit(rng.standard_normal((200, 16))), factory=factory)
    data, meta = index.state()
    size, slots = data.nbytes, len(meta["doc_of"])
    fresh = unit(rng.standard_normal((1000, 16)))
    for cycle in range(50_000):
        doc = ids[cycle % 200]
        index.upsert([doc], fresh[cycle % 1000 : cycle % 1000 + 1])
        if cycle % 2:
            index.remove([doc])
            index.upsert([doc], fresh[(cycle + 1) % 1000 : (cycle + 1) % 1000 + 1])
    data, meta = index.state()
    assert len(index) == 200 and len(meta["doc_of"]) == slots
    assert data.nbytes <= size * 1.05
    back = VectorIndex.from_state(data, meta)
    probe = fresh[(49_999 + 1) % 1000 : (49_999 + 1) % 1000 + 1]
    assert back.search(probe, 1)[0][0][0] == ids[49_999 % 200]  # the last write is what is found


def test_searches_keep_running_while_a_snapshot_serializes_the_index():
    """Counted, not timed: searches that start and finish while a serialization runs. Under a lock that
    serializes them, at most the one already running could (and the machine's load does not matter)."""
    import threading

    rng = np.random.default_rng(0)
    x = unit(rng.standard_normal((200_000, 64)))
    index = VectorIndex.build(64, [f"d{i}" for i in range(len(x))], x, factory="IVF256,Flat")
    serializing = threading.Event()

    def snapshots():
        for _ in range(10):
            serializing.set()
            index.state()
            serializing.clear()

    thread = threading.Thread(target=snapshots)
    inside = 0
    thread.start()
    while thread.is_alive():
        began = serializing.is_set()
        index.search(x[:1], 10)
        inside += began and serializing.is_set()
    thread.join()
    assert inside >= 30, inside  # more than 2 per serialization, on average


def test_a_factory_that_needs_training_serves_exactly_until_it_can_be_trained():
    """An empty collection on IVF or a quantizer used to fail every write (faiss trained on 0 vectors): a 500."""
    assert (training_minimum(32, "Flat"), training_minimum(32, "IVF16,Flat"), training_minimum(32, "IVF4,PQ8")) == (
        0,
        16,
        256,
    )
    x = clustered(300)
    index = VectorIndex(32, "IVF16,Flat")
    assert index.factory == "Flat" and index.rebuild_reason() is None
    index.upsert([f"d{i}" for i in range(10)], x[:10])
    assert index.search(x[:1], 1)[0][0][0] == "d0" and index.rebuild_reason() is None  # 10 < 16 lists
    index.upsert([f"d{i}" for i in range(10, 300)], x[10:])
    assert index.rebuild_reason() == "300 vectors: enough to train IVF16,Flat"
    rebuilt = VectorIndex.build(32, [f"d{i}" for i in range(300)], x, factory="IVF16,Flat")
    assert rebuilt.factory == "IVF16,Flat" and rebuilt.rebuild_reason() is None
    assert VectorIndex.build(32, ["a"], x[:1], factory="IVF16,Flat").factory == "Flat"
