"""Graphs made where torch is, for an install without it: `export-onnx` writes the int8 graph alone and checks it
with its bundled correction."""

import json
import os

import pytest

from app.backbones import build_backbone
from app.core.config import MODELS_DIR, Settings
from app.correction.publication import find_bundled
from tests.cli.conftest import run_cli

pytestmark = pytest.mark.model


@pytest.mark.process
def test_export_onnx_writes_the_int8_graph_alone_and_checks_it_with_its_bundled_correction(mean_graph, tmp_path):
    graphs = tmp_path / "graphs"
    graphs.mkdir()
    os.link(mean_graph, graphs / mean_graph.name)  # exported already: the command finds it, as a rebuild would
    fp32 = graphs / mean_graph.name.replace("-int8.onnx", "-none.onnx")
    fp32.write_bytes(b"an fp32 graph quantized from")
    done = run_cli("export-onnx", "--onnx-dir", str(graphs), env={"CE_DATA_DIR": str(tmp_path / "data")})
    assert done.returncode == 0, done.stderr[-2000:]
    (line,) = done.stdout.strip().splitlines()
    result = json.loads(line)
    served = build_backbone(Settings(backbone="onnx", onnx_dir=graphs))
    assert result["fingerprint"] == served.fingerprint and result["graph"] == mean_graph.name
    assert result["correction"] == find_bundled(MODELS_DIR, served).id and result["problem"] is None
    assert result["corrected"] >= result["raw"] > 80  # STS-B dev, Spearman x100
    assert sorted(p.name for p in graphs.iterdir()) == [mean_graph.name]  # the fp32 graph is not kept

    empty = tmp_path / "no-models"
    empty.mkdir()
    refused = run_cli(
        "export-onnx",
        "--onnx-dir",
        str(graphs),
        "--no-check",
        env={"CE_DATA_DIR": str(tmp_path / "data"), "CE_MODELS_DIR": str(empty)},
    )
    assert refused.returncode == 0 and json.loads(refused.stdout)["correction"] is None  # --no-check: reported
    failed = run_cli(
        "export-onnx",
        "--onnx-dir",
        str(graphs),
        env={"CE_DATA_DIR": str(tmp_path / "data"), "CE_MODELS_DIR": str(empty)},
    )
    assert failed.returncode == 3 and "no bundled correction matches the mean graph" in failed.stderr
