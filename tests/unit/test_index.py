"""The FAISS wrapper: exact cosine ranking, upsert replaces, delete removes."""

import numpy as np
import pytest

from app.correction.artifact import l2_normalize
from app.index import VectorIndex


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
