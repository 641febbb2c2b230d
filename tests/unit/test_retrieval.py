"""Retrieval metrics on collections small enough to score by hand, and the BEIR-layout reader."""

import json
import math

import numpy as np
import pytest

from app.offline.retrieval import (
    cached_encoding,
    exact_rankings,
    mrr_at,
    ndcg_at,
    paired_interval,
    per_query,
    read_collection,
    recall_at,
)


def write_collection(folder, docs, queries, qrels):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    (folder / "qrels").mkdir()
    rows = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t{s}" for q, d, s in qrels)]
    (folder / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n")
    return folder


def test_metrics_match_a_hand_computation():
    judged = {"d1": 2, "d3": 1}
    ranked = ["d2", "d1", "d3"]
    dcg = 2 / math.log2(3) + 1 / math.log2(4)  # d1 at rank 2, d3 at rank 3
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert ndcg_at(ranked, judged) == pytest.approx(dcg / ideal) == pytest.approx(0.66967, abs=1e-5)
    assert ndcg_at(["d1", "d3"], judged) == pytest.approx(1.0)
    assert ndcg_at(ranked, judged, k=1) == 0.0
    assert recall_at(ranked, judged) == 1.0 and recall_at(ranked, judged, k=2) == 0.5
    assert mrr_at(ranked, judged) == 0.5 and mrr_at(["x"] * 10 + ["d1"], judged) == 0.0


def test_the_reader_keeps_judged_queries_and_string_ids(tmp_path):
    folder = write_collection(
        tmp_path / "c",
        docs=[{"_id": "1", "title": "Wings", "text": "lift at speed"}, {"_id": 2, "title": "", "text": "heat"}],
        queries=[{"_id": "1", "text": "lift"}, {"_id": "9", "text": "unjudged"}, {"_id": "3", "text": "only zero"}],
        qrels=[("1", "1", 2), ("1", "2", 1), ("3", "2", 0)],
    )
    c = read_collection(folder)
    assert c.doc_ids == ["1", "2"] and c.doc_texts == ["Wings lift at speed", "heat"]
    assert c.query_ids == ["1"] and c.qrels == {"1": {"1": 2, "2": 1}}  # query "1" and document "1" differ
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\t1\n")
    with pytest.raises(ValueError, match="test.tsv:2"):
        read_collection(folder)


def test_exact_rankings_order_by_cosine_and_metrics_come_per_query(tmp_path):
    docs = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    queries = np.array([[0.0, 2.0], [1.0, 0.1]])
    rankings = exact_rankings(queries, docs, ["a", "b", "c"])
    assert rankings == [["b", "c", "a"], ["a", "c", "b"]]
    folder = write_collection(tmp_path / "c", [{"_id": i, "text": i} for i in "abc"],
                              [{"_id": "q1", "text": "x"}, {"_id": "q2", "text": "y"}],
                              [("q1", "b", 1), ("q2", "c", 1)])  # fmt: skip
    metrics = per_query(rankings, read_collection(folder))
    np.testing.assert_allclose(metrics["mrr_at_10"], [1.0, 0.5])
    np.testing.assert_allclose(metrics["ndcg_at_10"], [1.0, 1 / math.log2(3)])


def test_paired_interval_and_the_encoding_cache(tmp_path):
    before = np.array([0.2, 0.4, 0.6, 0.8])
    assert paired_interval(before, before) == (0.0, 0.0)
    assert paired_interval(before, before + 0.1) == pytest.approx((0.1, 0.1))
    calls = []

    def encode(texts):
        calls.append(len(texts))
        return np.ones((len(texts), 3), dtype=np.float32)

    first = cached_encoding(encode, ["a", "b"], "backbone-1", tmp_path)
    again = cached_encoding(encode, ["a", "b"], "backbone-1", tmp_path)
    cached_encoding(encode, ["a", "b"], "backbone-2", tmp_path)  # another backbone: encoded again
    assert calls == [2, 2] and np.array_equal(first, again)
