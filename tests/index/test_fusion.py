"""Fusion of the dense and lexical lists, and passages collapsed into their documents, checked by hand."""

from __future__ import annotations

import pytest

from app.index.fusion import Ranking, best_passages, convex, fuse, passage_key, passage_of, rrf


def test_rrf_weights_each_list_by_its_ranks():
    dense, lexical = [("a", 0.9), ("b", 0.8)], [("b", 12.0), ("c", 3.0)]
    fused = dict(rrf(dense, lexical, 0.25, k=60))
    assert fused["a"] == pytest.approx(0.75 / 61)
    assert fused["b"] == pytest.approx(0.75 / 62 + 0.25 / 61)
    assert fused["c"] == pytest.approx(0.25 / 62)
    assert [d for d, _ in rrf(dense, lexical, 0.25)] == ["b", "a", "c"]


def test_convex_combines_min_max_scores_and_a_list_that_missed_a_document_gives_it_zero():
    dense, lexical = [("a", 0.9), ("b", 0.7), ("c", 0.5)], [("c", 10.0), ("e", 7.0), ("d", 4.0)]
    fused = dict(convex(dense, lexical, 0.4))
    assert fused["a"] == pytest.approx(0.6 * 1.0)
    assert fused["b"] == pytest.approx(0.6 * 0.5)
    assert fused["c"] == pytest.approx(0.6 * 0.0 + 0.4 * 1.0)
    assert fused["e"] == pytest.approx(0.4 * 0.5) and fused["d"] == pytest.approx(0.0)
    assert [d for d, _ in convex([("x", 0.3)], [("x", 2.0)], 0.5)] == ["x"]  # one hit each: scaled to 1


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
