"""The ranking chosen on judgments: fused only when it keeps every collection and its gain is clear."""

from __future__ import annotations

from app.index.fusion import Candidates
from app.offline.ranking_tuning import choose_ranking
from app.offline.retrieval import JudgedCorpus


def judged(n_queries: int, lexical_good: bool, dense_good: bool = False):
    """Queries q{i} each with one relevant document r{i} among 50; a good list ranks it first, a bad one 30th."""
    docs = [f"r{i}" for i in range(n_queries)] + [f"x{i}" for i in range(50 - n_queries)]
    collection = JudgedCorpus(docs, docs, [f"q{i}" for i in range(n_queries)], ["q"] * n_queries,
                            {f"q{i}": {f"r{i}": 1} for i in range(n_queries)})  # fmt: skip
    lists = []
    for i in range(n_queries):
        others = [d for d in docs if d != f"r{i}"]

        def ranked(good: bool, others=others, i=i):
            order = [f"r{i}", *others] if good else [*others[:29], f"r{i}", *others[29:]]
            return [(d, 1.0 - j / 100) for j, d in enumerate(order)]

        lists.append(Candidates(ranked(dense_good), ranked(lexical_good)[:40]))
    return collection, lists


def test_a_lexical_list_that_finds_what_dense_misses_is_fused_in():
    chosen, record = choose_ranking([judged(20, True), judged(20, True)], "a+b")
    assert chosen.mode in ("hybrid", "lexical") and record["ndcg_gain_lower_bound"] >= 0.1
    assert chosen.chosen_by.startswith("judgments (a+b)")


def test_a_fusion_that_loses_on_one_collection_is_refused():
    chosen, record = choose_ranking([judged(20, True), judged(20, False, dense_good=True)], "a+b")
    assert chosen.mode == "dense" and record["chosen"] == record["dense"]
