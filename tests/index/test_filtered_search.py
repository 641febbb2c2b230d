"""Filtered dense search chosen by the share a filter lets through: checked by hand, then on a real IVF index against
exact search restricted to the allowed documents, at a large, a small and a tiny share."""

import numpy as np
import pytest

from app.index.faiss_index import VectorIndex
from app.index.filtered_search import kept, post_filter_depth, post_filtered, widening


def test_depth_widening_and_what_is_kept_by_hand():
    assert post_filter_depth(10, 0.5, 10_000) == 46 and post_filter_depth(10, 0.5, 30) == 30
    assert widening(0.01) == pytest.approx(10.0) and widening(1.0) == 1.0
    rows = [[("a", 0.9), ("b", 0.8), ("c", 0.7)], [("b", 0.5), ("c", 0.4)]]
    assert kept(rows, {"a", "c"}, 1) == [[("a", 0.9)], [("c", 0.4)]] and kept(rows, {"a"}, 1) is None
    asked = []
    assert post_filtered(lambda depth: asked.append(depth) or rows, {"a", "c"}, 1, 4) == [[("a", 0.9)], [("c", 0.4)]]
    assert asked == [4] and post_filtered(lambda depth: rows, {"a"}, 1, 100) is None  # 1% of 100: a selector's job


@pytest.mark.parametrize("share", [0.5, 0.02, 0.002])
def test_filtered_ivf_search_finds_the_exact_filtered_top_ten(share):
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(5000, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"d{i}" for i in range(len(vectors))]
    index = VectorIndex.build(32, ids, vectors, factory="IVF64,Flat", recall=0.95)
    allowed_rows = np.flatnonzero(rng.random(len(vectors)) < share)
    allowed = {ids[i] for i in allowed_rows}
    queries = rng.normal(size=(40, 32)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    truth = allowed_rows[np.argsort(-(queries @ vectors[allowed_rows].T), axis=1)[:, :10]]
    found = index.search(queries, 10, allowed=allowed)
    assert all(len(row) == min(10, len(allowed)) and {d for d, _ in row} <= allowed for row in found)
    recall = np.mean([len({ids[j] for j in t} & {d for d, _ in f}) / len(t) for t, f in zip(truth, found, strict=True)])
    assert recall >= 0.95, recall
