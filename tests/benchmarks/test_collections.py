"""`bench-collections`: the memory of one, two and three collections on one server."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import run_cli


@pytest.mark.process
def test_bench_collections_reports_memory_of_one_two_and_three_collections(tmp_path):
    env = {"CE_BACKBONE": "hashing", "CE_MODELS_DIR": str(tmp_path / "models")}
    r = run_cli("bench-collections", "--docs", "100", "--json", env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["documents_each"] == 100 and result["one_collection_mb"] > 0
    assert 0.9 < result["two_sharing_one_backbone_ratio"] < 1.3  # one encoder for both: only an index more
    assert result["plus_one_on_cls_mb"] >= 0.9 * result["two_sharing_one_backbone_mb"]
