"""The soak: every request kind mixed against a real server, errors counted and memory sampled."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import run_cli


@pytest.mark.process
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
