"""Rankings compared on one ingestion: a collection's queries and its like tasks, each ranking per query against
the served one."""

from __future__ import annotations

from app.offline.fusion_study import FORMS, SERVED_FORM, STUDIED, UNREAD, compare_rankings
from app.offline.retrieval import read_judged_corpus
from tests.offline.test_retrieval import write_collection

DOCS = [
    {"_id": "0", "title": "", "text": "the grey heron waits by the river at dawn"},
    {"_id": "1", "title": "", "text": "a grey heron waits by the water at dusk"},
    {"_id": "2", "title": "", "text": "the night train leaves the city station"},
    {"_id": "3", "title": "", "text": "a late train leaves the station at night"},
    {"_id": "4", "title": "", "text": "the cat sleeps in the sun"},
]


def test_every_studied_ranking_is_scored_on_queries_and_on_like_tasks_against_the_served_one(make_settings, tmp_path):
    queries = [{"_id": "birds", "text": "heron"}, {"_id": "trains", "text": "train station"}]
    judged = [("birds", "0", 1), ("birds", "1", 1), ("trains", "2", 1), ("trains", "3", 1)]
    folder = write_collection(tmp_path / "tiny", DOCS, queries, judged)
    found = compare_rankings(make_settings(backbone="hashing"), read_judged_corpus(folder), tasks=10)
    assert set(found) == {"queries", "like tasks", "long queries"} and found["queries"]["n"] == 2
    assert found["like tasks"]["n"] == found["long queries"]["n"] == 4
    for table in found.values():
        assert set(table) == {"n", "default", *STUDIED, UNREAD, *FORMS, "default, no feedback"}
        assert table["default"]["vs_default_95"] == [0.0, 0.0]  # the served ranking against itself
    assert found["like tasks"]["dense"]["ndcg_at_10"] == 100.0  # each document's sibling is its nearest
    assert found["long queries"]["dense"]["ndcg_at_10"] == 100.0  # ... once the stored copy is judged out
    like = found["like tasks"]  # a like search feeds back by default; the others do not
    assert like["default"]["ndcg_at_10"] == like[SERVED_FORM]["ndcg_at_10"]
    assert found["queries"]["default"]["ndcg_at_10"] == found["queries"]["default, no feedback"]["ndcg_at_10"]
