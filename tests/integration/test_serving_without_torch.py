"""Serving needs no torch: with the offline extra's libraries made unimportable, the default backbone serves an
exported graph (embed, similarity, documents, search), and what it cannot load here is a 422 that says why.
`export-onnx` makes such a graph where torch is, checked with its bundled correction."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

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
