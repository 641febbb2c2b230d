"""Schemathesis against a real server process: no input the OpenAPI schema allows, or breaks, is a 5xx; lone
surrogates in JSON bodies (tests/fuzz_surrogates.py) included."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port, server_env, server_log, start_server, stop_server, with_graphs

ST = Path(sys.executable).with_name("st")  # installed with the dev extras, next to this Python


# `make fuzz` asks for more (over 5,000 requests) with a random seed; `make test` for these, seeded.
# 80: enough generated bodies beside the coverage phase's deliberate type violations that "mostly rejected" (the
# schema validation mismatch warning) speaks of the schema, not of how many fields an operation has.
EXAMPLES = os.environ.get("CE_FUZZ_EXAMPLES", "80")
SEED = os.environ.get("CE_FUZZ_SEED", "7")
MAX_SECONDS = 5  # no request, whatever it asks (a collection in 16 parts, say), is held longer
# `make test` fuzzes the backbone as it ships (ONNX int8, its bundled correction); `make fuzz` the weight-free one.
BACKBONE = os.environ.get("CE_FUZZ_BACKBONE", "onnx")


@pytest.mark.model
def test_no_generated_request_gets_a_server_error(tmp_path, onnx_graphs):
    """Every operation of the schema, generated and broken on purpose, against a real server process."""
    backbone = BACKBONE
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with_graphs(onnx_graphs, tmp_path / "data")
    # The service's own settings but a smaller CE_MAX_TEXTS (a shorter run): collections in parts allowed, as shipped.
    proc = start_server(server_env(tmp_path, port, CE_BACKBONE=backbone, CE_MAX_TEXTS="16"), base)
    counted = tmp_path / "surrogate-bodies"
    hooks = {"SCHEMATHESIS_HOOKS": "tests.fuzz_surrogates", "PYTHONPATH": str(ROOT), "CE_FUZZ_SURROGATES": str(counted)}
    try:
        run = subprocess.run(
            [
                str(ST),
                "--config-file",
                str(ROOT / "schemathesis.toml"),
                "run",
                f"{base}/openapi.json",
                "--checks",
                "not_a_server_error",
                "--max-response-time",
                str(MAX_SECONDS),
                "--max-examples",
                EXAMPLES,
                "--seed",
                SEED,
                "--workers",
                "1",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=tmp_path,
            env={**os.environ, **hooks},
        )
    finally:
        stop_server(proc)
    summary = run.stdout[-3000:]
    assert run.returncode == 0, summary
    cases = re.search(r"Test cases:\s+(\d+) generated, (\d+) passed", summary)
    assert cases and int(cases.group(1)) >= 500 and cases.group(1) == cases.group(2), summary
    assert "unhandled error" not in server_log(proc)
    assert len(counted.read_text().splitlines()) >= 100  # bodies with a lone surrogate were sent
    assert "Schema validation mismatch" not in run.stdout, summary  # the schema says what the server refuses
    print(f"schemathesis on {backbone}: {cases.group(1)} requests, none a 5xx or over {MAX_SECONDS} s; seed {SEED}")
