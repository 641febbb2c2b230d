"""Filtered dense search chosen by the share a filter lets through: checked by hand, then on a real IVF index against
exact search restricted to the allowed documents, at a large, a small and a tiny share."""

import numpy as np
import pytest

from app.index.factories import new_faiss_index
from app.index.faiss_index import VectorIndex
from app.index.filtered_search import exact_within, kept, labels_of, post_filter_depth, post_filtered, widening


def test_depth_widening_and_what_is_kept_by_hand():
    assert post_filter_depth(10, 0.5, 10_000) == 46 and post_filter_depth(10, 0.5, 30) == 30
    assert widening(0.01) == pytest.approx(15.0) and widening(1.0) == 1.5
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


def test_a_few_documents_are_scored_exactly_on_vectors_reconstructed_by_id():
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(400, 8)).astype(np.float32)
    index = new_faiss_index(8, "IVF8,Flat")
    index.train(vectors)
    index.add_with_ids(vectors, np.arange(400, dtype=np.int64) * 2)
    labels = labels_of({"a": 10, "b": 20, "c": 798, "gone": 5}, ["a", "missing", "c", "b"])
    assert labels.tolist() == [10, 798, 20]
    query = vectors[[5]]
    scores, top = exact_within(index, labels, query, 2)
    expected = sorted(labels.tolist(), key=lambda lab: -float(vectors[lab // 2] @ query[0]))[:2]
    assert top.tolist() == [expected] and scores[0, 0] >= scores[0, 1]
    flat = new_faiss_index(8, "Flat")
    flat.add_with_ids(vectors, np.arange(400, dtype=np.int64))
    assert exact_within(flat, labels, query, 2) is None  # an id map cannot reconstruct by id: the selector's job


def test_a_filters_labels_are_kept_per_state_and_a_write_makes_new_ones():
    from app.index.filtered_search import Allowed, LabelCache

    cache, label_of = LabelCache(), {"a": 1, "b": 2}
    first = cache.selector(label_of, Allowed({"a", "b"}, key="f"), version=0)
    assert sorted(first[0].tolist()) == [1, 2] and first[1].is_member(2) and not first[1].is_member(3)
    assert cache.selector(label_of, Allowed({"a"}, key="f"), version=0) is first  # the same filter, the same state
    label_of["c"] = 3
    assert sorted(cache.selector(label_of, Allowed({"a", "c"}, key="f"), version=1)[0].tolist()) == [1, 3]
    assert cache.selector(label_of, {"a"}, version=1)[0].tolist() == [1]  # no key: looked up, not kept
    rng = np.random.default_rng(2)
    vectors = rng.normal(size=(2000, 16)).astype(np.float32)
    index = VectorIndex.build(16, [f"d{i}" for i in range(2000)], vectors, factory="IVF16,Flat", recall=0.95)
    ids = {f"d{i}" for i in range(0, 2000, 50)}  # 2%: the selector's path, whose labels are kept
    before = index.search(vectors[:1], 5, allowed=Allowed(ids, key="tier"))[0]
    index.upsert(["d0"], -vectors[:1])  # d0 moves away from the query: its label changes
    after = {d for d, _ in index.search(vectors[:1], 5, allowed=Allowed(ids, key="tier"))[0]}
    assert before[0][0] == "d0" and "d0" not in after and after <= ids
