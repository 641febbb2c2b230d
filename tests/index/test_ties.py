"""A list's top k is settled only past the run of equal scores at the k-th; then cut by (score, id)."""

from app.index.ties import cut, decided


def test_a_list_is_decided_when_it_ran_out_or_its_last_score_is_below_the_kth():
    assert decided([0.9, 0.8], depth=2, asked=3)  # ran out
    assert not decided([0.9, 0.8, 0.8], depth=2, asked=3)  # the third ties the second: one more may too
    assert decided([0.9, 0.8, 0.7], depth=2, asked=3)
    assert not decided([0.9, 0.8], depth=2, asked=2)  # read exactly k: the next may tie


def test_equal_scores_are_cut_in_the_order_of_their_ids():
    hits = [("c", 0.5), ("a", 0.5), ("z", 0.9), ("b", 0.5)]
    assert cut(hits, 3) == [("z", 0.9), ("a", 0.5), ("b", 0.5)]
    assert cut(hits, 3) == cut(list(reversed(hits)), 3)
