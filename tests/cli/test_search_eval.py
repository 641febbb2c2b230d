"""`eval-search` on a tiny judged collection: its figures, and its cache reused."""

from __future__ import annotations

import json

import pytest

from app.correction.publication import read_artifact_file
from tests.cli.conftest import run_cli


@pytest.mark.process
def test_eval_search_scores_a_tiny_collection_and_reuses_its_cache(env, tmp_path):
    from tests.offline.test_retrieval import write_collection

    docs = [
        {"_id": str(i), "title": "", "text": f"the {w} {v} at night"}
        for i, (w, v) in enumerate(
            [("cat", "sleeps"), ("dog", "runs"), ("plane", "flies"), ("river", "sings"), ("child", "reads")]
        )
    ]
    queries = [{"_id": "q0", "text": "cat sleeps"}, {"_id": "q1", "text": "plane flies"}]
    folder = write_collection(tmp_path / "tiny", docs, queries, [("q0", "0", 1), ("q1", "2", 2)])
    runs = [run_cli("eval-search", "--data", str(folder), "--correction", "none", "--json", env=env) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr[-2000:]
    result = json.loads(runs[0].stdout.strip().splitlines()[-1])
    assert (result["n_queries"], result["n_docs"], result["correction"]) == (2, 5, None)
    # each query's one relevant document shares its words: ranked first, raw and (no correction) corrected
    assert result["raw_ndcg_at_10"] == result["ndcg_at_10"] == 100.0 and result["ndcg_at_10_change_95"] == [0, 0]
    assert result["raw_recall_at_100"] == result["index_recall_at_100"] == 100.0
    assert json.loads(runs[1].stdout.strip().splitlines()[-1]) == result
    assert len(list((tmp_path / "data" / "cache" / "retrieval").glob("*.npy"))) == 2  # documents, queries: once
    r = run_cli("eval-search", "--data", str(tmp_path), env=env)
    assert r.returncode == 2 and "corpus.jsonl" in r.stderr
    # Fitted now, its search space chosen on the same judgments: raw already ranks perfectly, so the rule keeps raw.
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"the {a} {b} at {c}" for a in "abcdefgh" for b in "ijklmnop" for c in "qrstu"))
    r = run_cli(
        "eval-search",
        "--data",
        str(folder),
        "--correction",
        "fit",
        "--method",
        "whitening",
        "--alpha",
        "0.5",
        "--fit-corpus",
        str(corpus),
        "--tune-qrels",
        str(folder),
        "--json",
        env=env,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    fitted = json.loads(r.stdout.strip().splitlines()[-1])
    assert fitted["correction"].startswith("whitening-") and fitted["space"] == "search"
    space = fitted["search_space"]
    assert (space["method"], space["shared_with_similarity"], space["tuned_on"]) == ("none", False, "tiny")
    assert space["raw"]["ndcg_at_10"] == [100.0] and fitted["ndcg_at_10"] == fitted["raw_ndcg_at_10"] == 100.0
    out = tmp_path / "tuned.npz"
    r = run_cli(
        "fit",
        "--corpus",
        str(corpus),
        "--method",
        "whitening",
        "--alpha",
        "0.5",
        "--tune-qrels",
        str(folder),
        "--out",
        str(out),
        env=env,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    search = read_artifact_file(out).extra["search"]
    ranking = ("ranking", "ranking_selection")  # fit also chooses the ranking on the judgments
    chosen_space = {k: v for k, v in search.items() if k not in ranking}
    assert chosen_space == {k: v for k, v in space.items() if k != "correction"}
    assert search["ranking"]["mode"] == "dense" and search["ranking_selection"]["tuned_on"] == "tiny"  # nothing to gain
    assert search["ranking_selection"]["candidates"] == 25  # 23 rankings and 2 of them with feedback


@pytest.mark.process
def test_eval_search_served_finishes_when_every_encoding_outlasts_the_request_deadline(env, tmp_path):
    """Offline work has no request deadline: with CE_REQUEST_TIMEOUT far below one round's time (as on a machine
    whose load average was 9), `eval-search --mode served` still adds every document and answers every query."""
    from tests.offline.test_retrieval import write_collection

    docs = [{"_id": str(i), "title": "", "text": f"document {i} about the {w}"} for i, w in enumerate(["cat", "sea"])]
    queries = [{"_id": "q0", "text": "the cat"}, {"_id": "q1", "text": "the sea"}]
    folder = write_collection(tmp_path / "tiny", docs, queries, [("q0", "0", 1), ("q1", "1", 1)])
    slow = {**env, "CE_REQUEST_TIMEOUT": "0.000001"}
    r = run_cli("eval-search", "--data", str(folder), "--mode", "served", "--correction", "none", "--json", env=slow)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.strip().splitlines()[-1])["n_queries"] == 2


@pytest.mark.process
def test_compare_rankings_prints_each_ranking_on_queries_like_tasks_and_long_queries(env, tmp_path):
    from tests.offline.test_fusion_study import DOCS
    from tests.offline.test_retrieval import write_collection

    queries = [{"_id": "birds", "text": "heron"}, {"_id": "trains", "text": "train station"}]
    judged = [("birds", "0", 1), ("birds", "1", 1), ("trains", "2", 1), ("trains", "3", 1)]
    folder = write_collection(tmp_path / "tiny", DOCS, queries, judged)
    r = run_cli("compare-rankings", "--data", str(folder), "--like-tasks", "3", env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    *lines, last = r.stdout.strip().splitlines()
    assert [line.split(" (")[0] for line in lines] == ["tiny queries", "tiny like tasks", "tiny long queries"]
    assert "convex 0.4" in lines[0] and json.loads(last)["tiny"]["like tasks"]["n"] == 3
    refused = run_cli("eval-search", "--data", str(folder), "--like-tasks", "3", env=env)
    assert refused.returncode == 2 and "--mode" in refused.stderr
