"""Serving needs no torch: with the offline extra's libraries made unimportable, the default backbone serves an
exported graph (embed, similarity, documents, search), and what it cannot load here is a 422 that says why.
`export-onnx` makes such a graph where torch is, checked with its bundled correction."""

import json
import os
import subprocess
import sys

import pytest

from app.backbones import build_backbone
from app.core.config import MODELS_DIR, Settings
from app.correction.publication import find_bundled
from tests.cli.conftest import run_cli
from tests.conftest import ROOT, with_graphs

pytestmark = pytest.mark.model
OFFLINE = ["torch", "transformers", "onnx", "sentence_transformers", "sklearn", "matplotlib"]

SERVE = """
import json, sys
for name in OFFLINE:
    sys.modules[name] = None  # as if not installed: an import fails, find_spec says None
from fastapi.testclient import TestClient
from app.core.config import Settings
from app.main import create_app

out = {}
settings = Settings(collection_backbones=["huggingface"], allow_unauthenticated=True)
with TestClient(create_app(settings)) as http:
    info = http.get("/info").json()["backbone"]
    out["runtime"] = info["runtime"]
    out["embed"] = http.post("/embed", json={"texts": ["a man plays a guitar"]}).status_code
    guitar = "A man is playing a guitar."
    pairs = [[guitar, "Someone plays the guitar."], [guitar, "Stocks fell."]]
    out["scores"] = http.post("/similarity", json={"pairs": pairs}).json()["scores"]
    docs = [{"id": "g", "text": "A man is playing a guitar on stage."}, {"id": "r", "text": "Heavy rain tomorrow."}]
    out["documents"] = http.post("/documents", json={"documents": docs}).status_code
    out["top"] = http.get("/search", params={"q": "someone strumming an instrument"}).json()["results"][0]["id"]
    for name, body in (("cls", {"name": "c", "pooling": "cls"}), ("torch", {"name": "t", "backbone": "huggingface"})):
        response = http.post("/collections", json=body)
        out[name] = [response.status_code, response.json()["error"]["message"]]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def mean_graph(tmp_path_factory, onnx_graphs):
    """The default backbone's int8 graph, exported once for the session, alone in a folder of its own."""
    backbone = build_backbone(
        Settings(backbone="onnx", data_dir=with_graphs(onnx_graphs, tmp_path_factory.mktemp("graphs")))
    )
    folder = tmp_path_factory.mktemp("mean-only")
    os.link(backbone.graph, folder / backbone.graph.name)
    return folder / backbone.graph.name


def test_the_default_backbone_serves_an_exported_graph_without_torch(mean_graph, redis_url, key_prefix, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CE_")}
    env |= {
        "CE_ONNX_DIR": str(mean_graph.parent),
        "CE_DATA_DIR": str(tmp_path),
        "CE_REDIS_URL": redis_url,
        "CE_KEY_PREFIX": key_prefix,
    }
    script = f"OFFLINE = {OFFLINE!r}\n{SERVE}"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["runtime"] == "onnxruntime-int8" and out["embed"] == 200 and out["documents"] == 201
    close, far = out["scores"]
    assert close > far + 0.3 and out["top"] == "g"
    assert out["cls"][0] == 422 and "export-onnx --pooling cls" in out["cls"][1]  # not exported, cannot be here
    assert out["torch"][0] == 422 and "needs torch" in out["torch"][1]


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
