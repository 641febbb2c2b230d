"""Fusion of the dense and lexical lists, and passages collapsed into their documents, checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from app.index.fusion import Ranking, best_passages, convex, fuse, passage_key, passage_of, rrf


def test_rrf_weights_each_list_by_its_ranks():
    dense, lexical = [("a", 0.9), ("b", 0.8)], [("b", 12.0), ("c", 3.0)]
    fused = dict(rrf(dense, lexical, 0.25, k=60))
    assert fused["a"] == pytest.approx(0.75 / 61)
    assert fused["b"] == pytest.approx(0.75 / 62 + 0.25 / 61)
    assert fused["c"] == pytest.approx(0.25 / 62)
    assert [d for d, _ in rrf(dense, lexical, 0.25)] == ["b", "a", "c"]


def test_convex_combines_z_scores_and_gives_a_missing_document_its_lists_lowest():
    dense, lexical = [("a", 0.9), ("b", 0.7), ("c", 0.5)], [("c", 10.0), ("d", 4.0)]
    dz = (np.array([0.9, 0.7, 0.5]) - 0.7) / np.std([0.9, 0.7, 0.5])
    lz = (np.array([10.0, 4.0]) - 7.0) / 3.0
    fused = dict(convex(dense, lexical, 0.4))
    assert fused["a"] == pytest.approx(0.6 * dz[0] + 0.4 * lz.min())
    assert fused["c"] == pytest.approx(0.6 * dz[2] + 0.4 * lz[0])
    assert fused["d"] == pytest.approx(0.6 * dz.min() + 0.4 * lz[1])


def test_a_mode_ranks_by_its_own_list_and_weight_zero_is_dense_order():
    dense, lexical = [("a", 0.9), ("b", 0.8), ("c", 0.1)], [("c", 9.0), ("b", 1.0)]
    assert fuse(dense, lexical, Ranking(mode="dense")) == dense
    assert fuse(dense, lexical, Ranking(mode="lexical")) == lexical
    assert [d for d, _ in fuse(dense, lexical, Ranking(lexical_weight=0.0))] == ["a", "b", "c"]
    assert [d for d, _ in fuse(dense, lexical, Ranking(lexical_weight=1.0))][0] == "c"


def test_a_ranking_refuses_what_it_cannot_do():
    for bad in ({"mode": "sparse"}, {"fusion": "max"}, {"lexical_weight": 1.5}):
        with pytest.raises(ValueError):
            Ranking(**bad)
    assert Ranking(mode="dense").describe()["fusion"] is None


def test_passages_collapse_to_their_best_and_keys_round_trip():
    hits = [(passage_key("x", 2), 0.9), ("y", 0.8), (passage_key("x", 0), 0.7), (passage_key("z", 1), 0.6)]
    docs, best = best_passages(hits)
    assert docs == [("x", 0.9), ("y", 0.8), ("z", 0.6)]
    assert best == {"x": 2, "y": 0, "z": 1}
    assert passage_of(passage_key("a:b", 3)) == ("a:b", 3) and passage_of("plain") == ("plain", 0)
