"""Retrieval metrics on collections small enough to score by hand, cross-checked against trec_eval (through
pytrec_eval) on a larger graded run, and the BEIR-layout reader."""

import json
import math

import numpy as np
import pytest
import pytrec_eval

from app.offline.retrieval import (
    JudgedCorpus,
    Judgments,
    cached_encoding,
    exact_top,
    paired_interval,
    read_judged_corpus,
)


def write_collection(folder, docs, queries, qrels):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    (folder / "qrels").mkdir()
    rows = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t{s}" for q, d, s in qrels)]
    (folder / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n")
    return folder


def test_metrics_agree_with_trec_eval_on_a_graded_run():
    # 40 queries over 150 documents, 1-6 judgments each graded 1-3 (a few on documents the corpus lacks), and
    # rankings 100 deep in which some relevant documents come late or never.
    rng = np.random.default_rng(7)
    doc_ids = [f"d{i}" for i in range(150)]
    qrels = {}
    for q in range(40):
        judged = rng.choice(150, int(rng.integers(1, 7)), replace=False)
        qrels[f"q{q}"] = {doc_ids[j]: int(rng.integers(1, 4)) for j in judged}
        if q % 7 == 0:
            qrels[f"q{q}"]["not-in-corpus"] = 2
    query_ids = list(qrels)
    top = np.array([rng.permutation(150)[:100] for _ in query_ids])
    corpus = JudgedCorpus(doc_ids, [""] * 150, query_ids, [""] * 40, qrels)
    ours = Judgments.of(corpus).per_query(top)

    def trec(measures, depth):
        rows = zip(query_ids, top, strict=True)
        run = {q: {doc_ids[d]: float(depth - r) for r, d in enumerate(row[:depth])} for q, row in rows}
        return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)

    full, first10 = trec({"ndcg_cut.10", "recall.100"}, 100), trec({"recip_rank"}, 10)
    assert ours["ndcg_at_10"] == pytest.approx([full[q]["ndcg_cut_10"] for q in query_ids], abs=1e-9)
    assert ours["recall_at_100"] == pytest.approx([full[q]["recall_100"] for q in query_ids], abs=1e-9)
    assert ours["mrr_at_10"] == pytest.approx([first10[q]["recip_rank"] for q in query_ids], abs=1e-9)
    assert 0 < ours["ndcg_at_10"].mean() < 1 and 0 < ours["recall_at_100"].mean() < 1  # neither trivial


def test_metrics_match_a_hand_computation():
    # d0..d3 in the corpus; q1 judges d1 (2), d3 (1); q2 judges d0 (1) and a document the corpus lacks (1).
    collection = JudgedCorpus(
        ["d0", "d1", "d2", "d3"],
        ["", "", "", ""],
        ["q1", "q2"],
        ["", ""],
        {"q1": {"d1": 2, "d3": 1}, "q2": {"d0": 1, "gone": 1}},
    )
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
    assert got["success_at_1"].tolist() == [0.0, 0.0] and best["success_at_1"].tolist() == [1.0, 1.0]
    late = judgments.per_query(np.array([[0] * 10 + [1], [2] * 11]))  # d1 at rank 11: outside MRR@10 and NDCG@10
    assert late["mrr_at_10"][0] == 0.0 and late["ndcg_at_10"][0] == 0.0 and late["recall_at_100"][0] == 0.5


def test_the_reader_keeps_judged_queries_and_string_ids(tmp_path):
    folder = write_collection(
        tmp_path / "c",
        docs=[{"_id": "1", "title": "Wings", "text": "lift at speed"}, {"_id": 2, "title": "", "text": "heat"}],
        queries=[{"_id": "1", "text": "lift"}, {"_id": "9", "text": "unjudged"}, {"_id": "3", "text": "only zero"}],
        qrels=[("1", "1", 2), ("1", "2", 1), ("3", "2", 0)],
    )
    c = read_judged_corpus(folder)
    assert c.doc_ids == ["1", "2"] and c.doc_texts == ["Wings lift at speed", "heat"]
    assert c.query_ids == ["1"] and c.qrels == {"1": {"1": 2, "2": 1}}  # query "1" and document "1" differ
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\t1\n")
    with pytest.raises(ValueError, match="test.tsv:2"):
        read_judged_corpus(folder)


def test_exact_top_orders_by_cosine_and_metrics_come_per_query(tmp_path):
    docs = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    queries = np.array([[0.0, 2.0], [1.0, 0.1]])
    top = exact_top(queries, docs)
    assert top.tolist() == [[1, 2, 0], [0, 2, 1]]
    folder = write_collection(
        tmp_path / "c",
        [{"_id": i, "text": i} for i in "abc"],
        [{"_id": "q1", "text": "x"}, {"_id": "q2", "text": "y"}],
        [("q1", "b", 1), ("q2", "c", 1)],
    )
    metrics = Judgments.of(read_judged_corpus(folder)).per_query(top)
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
