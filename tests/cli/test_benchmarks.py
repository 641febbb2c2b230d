"""The benchmark commands print every figure they promise, against real servers."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import run_cli


@pytest.mark.process
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
