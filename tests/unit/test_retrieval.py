"""Retrieval metrics on collections small enough to score by hand, and the BEIR-layout reader."""

import json
import math

import numpy as np
import pytest

from app.offline.retrieval import Collection, Judgments, cached_encoding, exact_top, paired_interval, read_collection


def write_collection(folder, docs, queries, qrels):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    (folder / "qrels").mkdir()
    rows = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t{s}" for q, d, s in qrels)]
    (folder / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n")
    return folder


def test_metrics_match_a_hand_computation():
    # d0..d3 in the corpus; q1 judges d1 (2), d3 (1); q2 judges d0 (1) and a document the corpus lacks (1).
    collection = Collection(["d0", "d1", "d2", "d3"], ["", "", "", ""], ["q1", "q2"], ["", ""],
                            {"q1": {"d1": 2, "d3": 1}, "q2": {"d0": 1, "gone": 1}})  # fmt: skip
    judgments = Judgments.of(collection)
    got = judgments.per_query(np.array([[2, 1, 3], [1, 2, -1]]))  # -1: nothing ranked there
    dcg = 2 / math.log2(3) + 1 / math.log2(4)  # q1: d1 at rank 2, d3 at rank 3
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert got["ndcg_at_10"][0] == pytest.approx(dcg / ideal) == pytest.approx(0.66967, abs=1e-5)
    assert got["recall_at_100"].tolist() == [1.0, 0.0] and got["mrr_at_10"].tolist() == [0.5, 0.0]
    assert got["ndcg_at_10"][1] == 0.0
    best = judgments.per_query(np.array([[1, 3, 0], [0, 1, 2]]))
    # q2's ideal counts the judged document the corpus lacks: its best NDCG is 1 / (1 + 1/log2(3)), recall 1/2
    assert best["ndcg_at_10"][0] == pytest.approx(1.0)
    assert best["ndcg_at_10"][1] == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert best["recall_at_100"].tolist() == [1.0, 0.5] and best["mrr_at_10"].tolist() == [1.0, 1.0]
    late = judgments.per_query(np.array([[0] * 10 + [1], [2] * 11]))  # d1 at rank 11: outside MRR@10 and NDCG@10
    assert late["mrr_at_10"][0] == 0.0 and late["ndcg_at_10"][0] == 0.0 and late["recall_at_100"][0] == 0.5


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


def test_exact_top_orders_by_cosine_and_metrics_come_per_query(tmp_path):
    docs = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    queries = np.array([[0.0, 2.0], [1.0, 0.1]])
    top = exact_top(queries, docs)
    assert top.tolist() == [[1, 2, 0], [0, 2, 1]]
    folder = write_collection(tmp_path / "c", [{"_id": i, "text": i} for i in "abc"],
                              [{"_id": "q1", "text": "x"}, {"_id": "q2", "text": "y"}],
                              [("q1", "b", 1), ("q2", "c", 1)])  # fmt: skip
    metrics = Judgments.of(read_collection(folder)).per_query(top)
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
