"""`bench-search` prints every figure it promises against exact search: recall, latency, memory, hybrid."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import run_cli


@pytest.mark.process
def test_bench_search_prints_every_figure_against_exact_search(tmp_path):
    env = {"CE_BACKBONE": "hashing", "CE_MODELS_DIR": str(tmp_path / "models"), "CE_DATA_DIR": str(tmp_path / "d")}
    r = run_cli("bench-search", "--n", "25000", "--queries", "100", "--hybrid-docs", "3000", "--json", env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    result = json.loads(lines[-1])
    assert result["n"] == 25000 and result["dim"] == 64 and result["index"].startswith("IVF")  # auto, past 20,000
    assert result["recall_at_10"] >= 0.9 and result["params"]["nprobe"] >= 1
    assert 0 < result["p50_ms"] <= result["p99_ms"] and result["build_s"] >= 0
    assert result["memory_mb"] == pytest.approx(25000 * 64 * 4 / 1e6, rel=0.2)  # IVF-Flat stores the vectors
    exact, approximate = result["real"]
    assert (
        exact["index"] == "Flat" and exact["recall_at_10"] == 1.0 and exact["n"] == 15437 - 100
    )  # the queries are held out
    assert approximate["index"].startswith("IVF") and approximate["recall_at_10"] >= 0.9
    hybrid = result["hybrid"]  # one query at a time through the search service, in each mode
    assert hybrid["n"] == 3000 and hybrid["passages"] == 3000 and hybrid["lexical_bytes_per_doc"] > 0
    assert all(
        0 < hybrid[m]["p50_ms"] <= hybrid[m]["p99_ms"] for m in ("dense", "lexical", "hybrid", "hybrid_feedback")
    )
    assert hybrid["feedback_p50_ratio"] == pytest.approx(
        hybrid["hybrid_feedback"]["p50_ms"] / hybrid["hybrid"]["p50_ms"], abs=0.01
    )
    assert hybrid["ranking"]["mode"] == "hybrid"
    assert result["stored_mb"] == pytest.approx(25000 * 64 * 2 / 1e6) and result["resident_mb"] > 0
    codes = ("--index", "IVF64,SQ8", "--queries", "100", "--hybrid-docs", "0", "--json")  # hashing: too alike for PQ
    r = run_cli("bench-search", "--n", "25000", *codes, env=env)  # STS-B cached now
    compressed = json.loads(r.stdout.strip().splitlines()[-1])
    assert compressed["index"] == "IVF64,SQ8" and compressed["params"]["rerank"] >= 50  # re-ranked from disk
    assert compressed["recall_at_10"] >= 0.85 and compressed["memory_mb"] < result["memory_mb"] / 3
    r = run_cli("bench-search", "--n", "1000", "--queries", "10", "--hybrid-docs", "0", env=env)
    assert r.returncode == 0 and r.stdout.startswith("synthetic: n 1,000, dim 64, Flat")
    r = run_cli("bench-search", "--n", "1000", "--dim", "8", "--hybrid-docs", "0", env=env)
    assert r.returncode == 2 and "no correction to reduce dims" in r.stderr
