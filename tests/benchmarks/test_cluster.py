"""`bench-cluster` on a few thousand documents: both servers filled through the API, every mode compared."""

import json

import pytest

from tests.cli.conftest import run_cli

pytest.importorskip("ray.cluster_utils")


@pytest.mark.process
def test_bench_cluster_finds_the_same_top_ten_as_one_process_in_every_mode():
    run = run_cli(
        "bench-cluster", "--n", "2000", "--queries", "20", "--nodes", "2", "--json", env={"CE_BACKBONE": "hashing"}
    )
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert (result["same_top10"]["dense"], result["same_top10"]["lexical"]) == (20, 20)
    assert result["same_top10_within_1e-4"]["hybrid"] == 20 and result["partial_answers"] == 0
    assert result["lexical_largest_relative_difference"] < 1e-4
    assert set(result["latency_ms"]["hybrid"]) == {"single", "cluster"} and result["ingest_docs_per_s"]["cluster"] > 0
