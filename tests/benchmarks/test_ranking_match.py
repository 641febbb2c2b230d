"""Two rankings are the same when their scores are, and so are the documents of each run of tied scores but the
last, which the cut may end anywhere."""

from app.benchmarks.ranking_match import same_ranking


def test_ties_may_come_in_any_order_and_the_last_run_may_be_cut_elsewhere():
    expected = [("a", 3.0), ("b", 2.0), ("c", 2.0), ("d", 1.0), ("e", 1.0)]
    assert same_ranking([("a", 3.0), ("c", 2.0), ("b", 2.0000001), ("e", 1.0), ("f", 1.0)], expected)
    assert not same_ranking([("b", 3.0), ("a", 2.0), ("c", 2.0), ("d", 1.0), ("e", 1.0)], expected)  # not tied
    assert not same_ranking([("a", 3.0), ("b", 2.0), ("x", 2.0), ("d", 1.0), ("e", 1.0)], expected)  # a tie's other
    assert not same_ranking([("a", 3.0), ("b", 2.1), ("c", 2.0), ("d", 1.0), ("e", 1.0)], expected)  # a score apart
    assert not same_ranking(expected[:4], expected) and same_ranking([], [])


def test_engines_last_digits_do_not_count():
    single = [("d1", 0.9954472184181213), ("d2", 0.9948089122772217), ("d3", 0.9947094321250916)]
    sharded = [("d1", 0.995447039604187), ("d2", 0.9948087930679321), ("d3", 0.9947093725204468)]
    assert same_ranking(sharded, single)  # float32 sums in another order: the same ranking
