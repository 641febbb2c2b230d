"""Fusion of the dense and lexical lists, checked by hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.index.fusion import (
    DEFAULT_WEIGHTS,
    Candidates,
    Ranking,
    explanations,
    fuse,
    min_max,
)


def test_rrf_weights_each_list_by_its_ranks():
    found = Candidates([("a", 0.9), ("b", 0.8)], [("b", 12.0), ("c", 3.0)])
    fused = dict(fuse(found, Ranking(fusion="rrf", lexical_weight=0.25, rrf_k=60)))
    assert fused["a"] == pytest.approx(0.75 / 61)
    assert fused["b"] == pytest.approx(0.75 / 62 + 0.25 / 61)
    assert fused["c"] == pytest.approx(0.25 / 62)
    assert [d for d, _ in fuse(found, Ranking(fusion="rrf", lexical_weight=0.25))] == ["b", "a", "c"]
    assert dict(fuse(found, Ranking(fusion="rrf", lexical_weight=0.25, rrf_k=1)))["c"] == pytest.approx(0.25 / 3)


def test_explanations_give_each_lists_rank_and_score_and_the_parts_that_sum_to_the_fused_score():
    found = Candidates([("a", 0.9), ("b", 0.5)], [("b", 8.0), ("c", 2.0)], 0.8, {"b": 1.0, "c": 0.5})
    for fusion in DEFAULT_WEIGHTS:
        ranking = Ranking(fusion=fusion)
        fused = dict(fuse(found, ranking))
        told = explanations(found, ranking, ["a", "b", "c"])
        for doc_id, entry in told.items():
            assert entry["fused"]["dense"] + entry["fused"]["lexical"] == pytest.approx(fused[doc_id])
    assert told["a"]["dense"] == {"rank": 1, "cosine": 0.9} and told["a"]["lexical"] is None
    assert told["c"]["lexical"] == {"rank": 2, "bm25": 2.0, "coverage": 0.5} and told["c"]["dense"] is None
    assert explanations(found, Ranking(mode="dense"), ["a"])["a"]["fused"] is None


def test_convex_combines_min_max_scores_and_a_list_that_missed_a_document_gives_it_zero():
    dense, lexical = [("a", 0.9), ("b", 0.7), ("c", 0.5)], [("c", 10.0), ("e", 7.0), ("d", 4.0)]
    fused = dict(fuse(Candidates(dense, lexical), Ranking(fusion="convex", lexical_weight=0.4)))
    assert fused["a"] == pytest.approx(0.6 * 1.0)
    assert fused["b"] == pytest.approx(0.6 * 0.5)
    assert fused["c"] == pytest.approx(0.6 * 0.0 + 0.4 * 1.0)
    assert fused["e"] == pytest.approx(0.4 * 0.5) and fused["d"] == pytest.approx(0.0)
    assert min_max([("x", 0.3)]) == {"x": 1.0}  # one hit: scaled to 1


def test_calibrated_weighs_each_list_by_what_it_has_to_say():
    dense, lexical = [("a", 0.9), ("b", 0.7), ("c", 0.5)], [("c", 10.0), ("e", 7.0), ("d", 4.0)]
    coverage = {"c": 1.0, "e": 0.5, "d": 0.0}
    found = Candidates(dense, lexical, dense_confidence=0.5, coverage=coverage)
    fused = dict(fuse(found, Ranking(fusion="calibrated", lexical_weight=0.7)))
    wd, wl = 0.3 * 0.5, 0.7 * 1.0  # dense weighed by its confidence, lexical by the best coverage
    assert fused["a"] == pytest.approx(wd * 1.0)
    assert fused["c"] == pytest.approx(wd * 0.0 + wl * (0.5 * 1.0 + 0.5 * 1.0))
    assert fused["e"] == pytest.approx(wl * (0.5 * 0.5 + 0.5 * 0.5))
    assert fused["d"] == pytest.approx(0.0)


def test_calibrated_puts_an_identifier_first_over_a_dense_list_without_signal():
    """Convex at 0.4 stretches the dense list's noise to [0, 1] and buries the one document holding the identifier."""
    dense = [(f"noise{i}", 0.40 - 0.01 * i) for i in range(10)]  # no better than unrelated documents
    lexical = [("target", 14.0), ("decoy", 6.0)]  # the decoy holds the identifier's common prefix only
    found = Candidates(dense, lexical, dense_confidence=0.0, coverage={"target": 1.0, "decoy": 0.3})
    assert fuse(found, Ranking(fusion="convex"))[0][0] == "noise0"
    assert fuse(found, Ranking())[0][0] == "target"  # the default: calibrated


def test_calibrated_without_coverage_is_convex_weighed_by_the_dense_confidence():
    dense, lexical = [("a", 0.9), ("b", 0.1)], [("b", 5.0), ("a", 1.0)]
    plain = fuse(Candidates(dense, lexical), Ranking(fusion="convex", lexical_weight=0.5))
    assert fuse(Candidates(dense, lexical), Ranking(fusion="calibrated", lexical_weight=0.5)) == plain


def test_a_mode_ranks_by_its_own_list_and_weight_zero_is_dense_order():
    dense, lexical = [("a", 0.9), ("b", 0.8), ("c", 0.1)], [("c", 9.0), ("b", 1.0)]
    found = Candidates(dense, lexical)
    assert fuse(found, Ranking(mode="dense")) == dense
    assert fuse(found, Ranking(mode="lexical")) == lexical
    for fusion in DEFAULT_WEIGHTS:
        assert [d for d, _ in fuse(found, Ranking(fusion=fusion, lexical_weight=0.0))] == ["a", "b", "c"]
        assert [d for d, _ in fuse(found, Ranking(fusion=fusion, lexical_weight=1.0))][0] == "c"


def test_an_unset_weight_is_the_fusions_own_default():
    assert {f: Ranking(fusion=f).lexical_weight for f in DEFAULT_WEIGHTS} == DEFAULT_WEIGHTS
    assert Ranking().fusion == "calibrated" and Ranking().lexical_weight == 0.7


def test_a_ranking_refuses_what_it_cannot_do():
    for bad in (
        {"mode": "sparse"},
        {"fusion": "max"},
        {"lexical_weight": 1.5},
        {"rrf_k": 0},
        {"candidates": 0},
        {"candidates": 2001},
    ):
        with pytest.raises(ValueError):
            Ranking(**bad)
    assert Ranking(mode="dense").describe()["fusion"] is None


def test_a_ranking_recorded_by_another_version_keeps_the_fields_this_one_knows():
    recorded = {"mode": "hybrid", "fusion": "rrf", "lexical_weight": 0.3, "chosen_by": "judgments", "window": 7}
    assert Ranking.from_record(recorded) == Ranking("hybrid", "rrf", 0.3, "judgments")
    assert Ranking.from_record({"mode": "dense"}).fusion == "calibrated"  # an older record: no fusion field


def test_equal_scores_rank_by_id_whatever_order_the_lists_hold_them_in():
    tied = [("d9", 0.5), ("d1", 0.5), ("d5", 0.7), ("d3", 0.5)]
    for mode in ("dense", "lexical", "hybrid"):
        found = Candidates(dense=tied, lexical=tied[::-1])
        assert [d for d, _ in fuse(found, Ranking(mode=mode, fusion="convex"))] == ["d5", "d1", "d3", "d9"], mode


LONG_QUERY = Candidates(  # a long query whose own text is stored ("q"): first in both lists, far above the rest
    [("q", 0.99), ("a", 0.70), ("b", 0.55), ("c", 0.20)],
    [("q", 300.0), ("b", 100.0), ("a", 50.0), ("c", 10.0)],
    1.0,
    {"q": 1.0, "b": 0.25, "a": 0.2, "c": 0.05},
    (0.2, 0.8),
)


def test_a_near_copy_keeps_its_own_parts_and_the_others_are_weighed_as_if_it_were_not_stored():
    assert LONG_QUERY.near_copy() == "q"
    rest = LONG_QUERY.without("q")
    assert rest.dense_confidence == pytest.approx((0.70 - 0.2) / 0.6) and rest.lexical_confidence == 0.25
    assert "q" not in rest.coverage and [d for d, _ in rest.lexical] == ["b", "a", "c"]
    fused, alone = dict(fuse(LONG_QUERY, Ranking())), dict(fuse(rest, Ranking()))
    assert {d: s for d, s in fused.items() if d != "q"} == pytest.approx(alone)
    assert fused["q"] == pytest.approx(0.3 * 1.0 + 0.7 * 1.0)  # its own parts: first in both lists, coverage 1
    assert [d for d, _ in fuse(LONG_QUERY, Ranking())] == ["q", "a", "b", "c"]
    squeezed = replace(LONG_QUERY, dense_range=None)  # read with the copy: lexical wins b over a, by BM25 it shrank
    assert [d for d, _ in fuse(squeezed, Ranking())] == ["q", "b", "a", "c"]


def test_only_a_document_first_in_both_lists_at_near_duplicate_cosine_is_a_near_copy():
    assert replace(LONG_QUERY, dense_range=None).near_copy() is None  # the range unknown: no judgement
    assert replace(LONG_QUERY, dense_confidence=0.9).near_copy() is None  # not as close as near duplicates
    assert replace(LONG_QUERY, lexical=LONG_QUERY.lexical[1:]).near_copy() is None  # lexical puts b first
    assert Candidates().near_copy() is None
    convex = Ranking(fusion="convex")  # only calibrated fusion reads confidences, and only it reads past a copy
    assert dict(fuse(LONG_QUERY, convex)) == dict(fuse(replace(LONG_QUERY, dense_range=None), convex))


def test_feedback_moves_toward_the_first_documents_of_the_list_it_is_given():
    hits = [("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6)]
    assert Ranking(feedback_docs=3).feedback_from(hits) == ["a", "b", "c"]
    assert Ranking(feedback_docs=5).feedback_from(hits[:2]) == ["a", "b"]
    assert Ranking().feedback_from(hits) == []  # off
