"""Two rankings are the same when their scores are (to 1e-4) and so are the documents above the last score."""

from app.benchmarks.ranking_match import same_ranking


def test_ties_at_the_cut_may_differ_and_nothing_else_may():
    expected = [("a", 3.0), ("b", 2.0), ("c", 1.0), ("d", 1.0)]
    assert same_ranking([("a", 3.0), ("b", 2.00001), ("d", 1.0), ("e", 1.0)], expected)  # a tie cut elsewhere
    assert not same_ranking([("b", 3.0), ("a", 2.0), ("c", 1.0), ("d", 1.0)], expected)  # above the tie: swapped
    assert not same_ranking([("a", 3.0), ("b", 2.1), ("c", 1.0), ("d", 1.0)], expected)  # a score apart
    assert not same_ranking(expected[:3], expected) and same_ranking([], [])
