"""The benchmark commands print every figure they promise, against real servers."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import run_cli


def test_bench_reports_every_figure_against_a_real_server(tmp_path):
    env = {"CE_BACKBONE": "hashing", "CE_MODELS_DIR": str(tmp_path / "models")}
    r = run_cli("bench", "--texts", "64", "--json", env=env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    for pattern in ("a_8_clients_x_8_texts", "b_32_clients_x_1_text"):
        figures = result[pattern]
        assert figures["errors"] == 0 and figures["sentences_per_s"] > 0 and figures["p99_ms"] >= figures["p50_ms"]
        ratio = figures["sentences_per_s"] / result["sentence_transformers_per_s"]
        assert figures["ratio_to_sentence_transformers"] == pytest.approx(ratio, rel=1e-2)
    assert result["sentence_transformers_per_s"] > 0 and result["runtime"] == "hashing"
    assert result["a_8_clients_x_8_texts"]["requests"] == 8 and result["b_32_clients_x_1_text"]["requests"] == 64
    assert result["server_peak_rss_mb"] > 10 and result["single_text_ratio"] > 0


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


def test_load_mixes_every_request_kind_and_samples_memory(tmp_path):
    env = {"CE_BACKBONE": "hashing", "CE_MODELS_DIR": str(tmp_path / "models")}
    r = run_cli("load", "--seconds", "4", "--clients", "4", "--json", env=env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["errors"] == 0 and result["clients"] == 4 and 3.5 < result["seconds"] < 10
    assert set(result["per_op"]) == {"embed", "similarity", "search", "write", "delete"}
    assert all(op["requests"] > 0 for name, op in result["per_op"].items() if name != "delete")
    assert len(result["rss_mb"]) >= 2 and all(mb > 10 for _, mb in result["rss_mb"])
    assert abs(result["rss_growth_second_half"]) < 0.5


def test_bench_collections_reports_memory_of_one_two_and_three_collections(tmp_path):
    env = {"CE_BACKBONE": "hashing", "CE_MODELS_DIR": str(tmp_path / "models")}
    r = run_cli("bench-collections", "--docs", "100", "--json", env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["documents_each"] == 100 and result["one_collection_mb"] > 0
    assert 0.9 < result["two_sharing_one_backbone_ratio"] < 1.3  # one encoder for both: only an index more
    assert result["plus_one_on_cls_mb"] >= 0.9 * result["two_sharing_one_backbone_mb"]
