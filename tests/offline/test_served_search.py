"""A judged collection searched exactly as /search searches it, on a service of its own: each mode's figures
against dense alone on the same service."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.offline.like_tasks import like_tasks
from app.offline.retrieval import DEPTH, read_judged_corpus
from app.offline.served_search import evaluate_served
from tests.offline.test_retrieval import write_collection

DOCS = [
    {"_id": str(i), "title": "", "text": f"the {w} {v} at night"}
    for i, (w, v) in enumerate([("cat", "sleeps"), ("dog", "runs"), ("plane", "flies"), ("river", "sings")])
]


@pytest.mark.parametrize("mode", ["lexical", "hybrid", "served"])
def test_each_mode_is_scored_beside_dense_on_the_same_service(make_settings, tmp_path, mode):
    queries = [{"_id": "q0", "text": "cat sleeps"}, {"_id": "q1", "text": "plane flies"}]
    folder = write_collection(tmp_path / "tiny", DOCS, queries, [("q0", "0", 1), ("q1", "2", 1)])
    result = evaluate_served(make_settings(backbone="hashing"), read_judged_corpus(folder), mode)
    assert result["ndcg_at_10"] == result["raw_ndcg_at_10"] == 100.0  # each query's words are its document's
    assert result["ingestion"]["docs_per_s"] > 0 and result["ranking"]["mode"] == (
        "hybrid" if mode == "served" else mode
    )


def test_an_unknown_mode_is_named(make_settings, tmp_path):
    folder = write_collection(tmp_path / "tiny", DOCS, [{"_id": "q0", "text": "cat"}], [("q0", "0", 1)])
    with pytest.raises(ValueError, match="--mode is one of"):
        evaluate_served(make_settings(backbone="hashing"), read_judged_corpus(folder), "sideways")


def test_more_like_this_tasks_search_like_their_document_and_never_find_it(make_settings, tmp_path):
    docs = DOCS + [{"_id": "4", "title": "", "text": "the cat sleeps at noon"}]
    queries = [{"_id": "q0", "text": "cat"}, {"_id": "q1", "text": "dog"}]
    folder = write_collection(tmp_path / "tiny", docs, queries, [("q0", "0", 1), ("q0", "4", 1), ("q1", "1", 1)])
    tasks = like_tasks(read_judged_corpus(folder))
    assert tasks.likes == ["0", "4"]  # q1 has one relevant document: no task
    result = evaluate_served(make_settings(backbone="hashing"), tasks, "hybrid")
    assert result["n_queries"] == 2 and result["success_at_1"] == 100.0  # each finds the other, not itself


def test_long_queries_send_their_document_s_text_and_are_judged_without_it(make_settings, tmp_path):
    docs = DOCS + [{"_id": "4", "title": "", "text": "the cat sleeps at noon"}]
    folder = write_collection(tmp_path / "tiny", docs, [{"_id": "q0", "text": "cat"}], [("q0", "0", 1), ("q0", "4", 1)])
    pasted = like_tasks(read_judged_corpus(folder), as_text=True)
    result = evaluate_served(make_settings(backbone="hashing"), pasted, "hybrid")
    assert result["n_queries"] == 2 and result["success_at_1"] == 100.0  # its own text first, judged out: the other


def test_a_collection_deeper_than_the_metrics_cut_is_searched_to_the_cut_with_the_service_s_own_limit(
    make_settings, tmp_path
):
    docs = [{"_id": str(i), "title": "", "text": f"note {i} about topic {i % 7}"} for i in range(DEPTH + 20)]
    folder = write_collection(tmp_path / "deep", docs, [{"_id": "q0", "text": "topic 3"}], [("q0", "3", 1)])
    pasted = like_tasks(replace(read_judged_corpus(folder), qrels={"q0": {"3": 1, "10": 1}}), as_text=True)
    for collection in (read_judged_corpus(folder), pasted):  # k = 100, and 101 with its own document judged out
        assert evaluate_served(make_settings(backbone="hashing"), collection, "hybrid")["recall_at_100"] > 0
