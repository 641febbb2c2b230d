"""The ranking chosen on judgments: fused only when it keeps every collection and its gain is clear."""

from __future__ import annotations

from dataclasses import replace

from app.index.fusion import Candidates, Ranking
from app.offline.ranking_tuning import choose_ranking, scored
from app.offline.retrieval import JudgedCorpus


def judged(n_queries: int, lexical_good: bool, dense_good: bool = False):
    """Queries q{i} each with one relevant document r{i} among 50; a good list ranks it first, a bad one 30th."""
    docs = [f"r{i}" for i in range(n_queries)] + [f"x{i}" for i in range(50 - n_queries)]
    collection = JudgedCorpus(
        docs,
        docs,
        [f"q{i}" for i in range(n_queries)],
        ["q"] * n_queries,
        {f"q{i}": {f"r{i}": 1} for i in range(n_queries)},
    )
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


def test_feedback_is_a_candidate_when_the_lists_searched_again_are_given():
    """The dense list puts each query's document 30th, searched again with feedback 1st; the lexical list holds other
    documents only, each holding a tenth of the query: feedback alone brings the document up."""
    n = 20
    docs = [f"r{i}" for i in range(n)] + [f"x{i}" for i in range(40)] + [f"y{i}" for i in range(20)]
    collection = JudgedCorpus(
        docs, docs, [f"q{i}" for i in range(n)], ["q"] * n, {f"q{i}": {f"r{i}": 1} for i in range(n)}
    )

    def dense(target: str, at: int) -> list[tuple[str, float]]:
        order = [f"x{j}" for j in range(at)] + [target] + [f"x{j}" for j in range(at, 40)]
        return [(d, 1.0 - j / 100) for j, d in enumerate(order)]

    lexical = [(f"y{j}", 10.0 - j) for j in range(20)]
    coverage = {d: 0.1 for d, _ in lexical}
    plain = [Candidates(dense(f"r{i}", 29), lexical, 1.0, coverage) for i in range(n)]
    fed = [Candidates(dense(f"r{i}", 0), lexical, 1.0, coverage) for i in range(n)]
    lists = {(): plain, (3, 1.0): fed, (3, 0.5): plain}
    chosen, record = choose_ranking([(collection, lists), (collection, lists)], "a+b")
    assert (chosen.feedback_docs, chosen.feedback_weight) == (3, 1.0) and record["candidates"] == 25
    without, _ = choose_ranking([(collection, plain), (collection, plain)], "a+b")  # nothing searched again:
    assert without.feedback_docs == 0  # feedback is no candidate


def test_a_query_s_own_document_is_judged_out_of_its_ranking():
    """Each query's own text stored ("own"): first in both lists, never an answer; what follows it is judged."""
    collection, lists = judged(10, True, dense_good=True)
    first = [Candidates([("x0", 2.0), *found.without("x0").dense], [("x0", 99.0)]) for found in lists]
    with_own = replace(collection, own=["x0"] * 10)
    assert scored(Ranking(mode="dense"), [(with_own, first)]).ndcg[0].mean() == 1.0
    assert scored(Ranking(mode="dense"), [(collection, first)]).ndcg[0].mean() < 1.0
