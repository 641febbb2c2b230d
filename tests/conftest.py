"""Shared fixtures: a real redis-server, the real backbone, and apps served over real HTTP."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import numpy as np
import pytest
import uvicorn

from app.benchmarks.http import free_port, start_service
from app.core.config import Settings
from app.correction import CorrectionArtifact, CovarianceStats, fit_correction
from app.correction.artifact import BackboneRef, CorpusRef
from app.store.embedded import EmbeddedRedis
from app.store.local_cluster import LocalRedisCluster
from app.store.redis_store import RedisStore

ROOT = Path(__file__).resolve().parents[1]
STS = ROOT / "datasets" / "stsbenchmark"
CROSS_PROCESS_FOLDERS = {"integration", "clients", "container"}  # each test there starts another process


def pytest_collection_modifyitems(items) -> None:
    """Mark every test of the cross-process folders `process`; elsewhere the test says so (test_markers.py checks)."""
    for item in items:
        if Path(item.path).relative_to(ROOT / "tests").parts[0] in CROSS_PROCESS_FOLDERS:
            item.add_marker(pytest.mark.process)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory) -> Iterator[str]:
    """One real redis-server for the session; tests isolate themselves with a key prefix."""
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"))
    url = server.start()
    yield url
    server.stop()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory) -> Iterator[LocalRedisCluster]:
    """A Redis Cluster of 3 primaries with a replica each, for the session (tests kill nodes of their own only)."""
    cluster = LocalRedisCluster(tmp_path_factory.mktemp("redis-cluster"))
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture
def own_redis_cluster(tmp_path) -> Iterator[LocalRedisCluster]:
    """A Redis Cluster of this test's own (3 primaries, a replica each): for tests that kill its nodes."""
    cluster = LocalRedisCluster(tmp_path / "own-redis-cluster")
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture
def key_prefix() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def store(redis_url, key_prefix) -> Iterator[RedisStore]:
    s = RedisStore.from_url(redis_url, prefix=key_prefix)
    yield s
    s.close()


@pytest.fixture
def make_settings(redis_url, key_prefix, tmp_path):
    """Settings pointing at the session Redis, a private key prefix and a private data folder."""

    def make(**overrides) -> Settings:
        values = dict(
            redis_url=redis_url, key_prefix=key_prefix, data_dir=tmp_path / "data", models_dir=tmp_path / "models"
        )
        values.update(overrides)
        return Settings(**values)

    return make


@pytest.fixture(scope="session")
def onnx_graphs(tmp_path_factory) -> Path:
    """The session's exported ONNX graphs: each export (~20 s) is made once, then linked into data folders."""
    return tmp_path_factory.mktemp("onnx-graphs")


def with_graphs(graphs: Path, data_dir: Path) -> Path:
    """`data_dir`, created, with the session's exported graphs as its `onnx` folder (as a second start finds it)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "onnx").symlink_to(graphs, target_is_directory=True)
    return data_dir


@pytest.fixture(scope="session")
def mean_graph(tmp_path_factory, onnx_graphs):
    """The default backbone's int8 graph, exported once for the session, alone in a folder of its own."""
    from app.backbones import build_backbone

    backbone = build_backbone(
        Settings(backbone="onnx", data_dir=with_graphs(onnx_graphs, tmp_path_factory.mktemp("graphs")))
    )
    folder = tmp_path_factory.mktemp("mean-only")
    os.link(backbone.graph, folder / backbone.graph.name)
    return folder / backbone.graph.name


@pytest.fixture(scope="session")
def minilm():
    """The real default backbone (all-MiniLM-L6-v2, mean pooling), loaded once."""
    from app.backbones import build_backbone

    return build_backbone(Settings(backbone="huggingface", pooling="mean"))


@contextmanager
def serve_app(app, timeout: float = 30.0) -> Iterator[httpx.Client]:
    """Run `app` under uvicorn on a free loopback port in a thread; yield a client for it."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def until_loaded(client: httpx.Client, name: str, timeout: float = 300.0) -> dict:
    """A collection's description once it is no longer `loading` (its backbone loaded, or failed to)."""
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(f"/collections/{name}").json()
        if body["state"] != "loading" or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


def error_of(response, status):
    """The error object of an answer with this status, in the one shape every 4xx and 5xx uses."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and {"type", "message"} <= set(body["error"])
    return body["error"]


def server_log(proc: subprocess.Popen) -> str:
    """What the server wrote to stderr so far (a file, so that a chatty server never blocks on a pipe)."""
    proc.log.seek(0)
    return proc.log.read().decode(errors="replace")


def start_server(env: dict, base: str) -> subprocess.Popen:
    """`python -m app serve` in a child process, once /ready answers 200; its stderr kept for server_log()."""
    log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process; read by server_log()
    proc = start_service(env, base, log, cwd=ROOT, timeout=120)
    proc.log = log
    return proc


def stop_server(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)


def server_env(tmp_path, port: int, **extra) -> dict:
    """The environment `make run` gives: no CE_ variables but the data folder and port (embedded Redis)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CE_") and k not in ("REDIS_URL", "RAY_ADDRESS")}
    return {**env, "CE_DATA_DIR": str(tmp_path / "data"), "CE_PORT": str(port), **extra}


TINY_WORDS = "the a cat dog sat on mat sun rain plane flies runs fast slow red blue green house tree".split()


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory):
    """A 2-layer random BERT with its own word-level vocab, saved the way a user's model folder is."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *TINY_WORDS]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab={token: i for i, token in enumerate(vocab)})
    assert tokenizer("the cat sat").input_ids == [2, 5, 7, 9, 3]  # its words, not [UNK] (id 1)
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertModel(config).eval().save_pretrained(folder)
    return folder


@pytest.fixture
def artifact_factory():
    """Fit a whitening artifact on given vectors, for a made-up backbone of matching dim."""

    def make(x, fingerprint="fp-test", **params) -> CorrectionArtifact:
        d = x.shape[1]
        mu, w = fit_correction(CovarianceStats(d).update(x), "whitening", **params)
        return CorrectionArtifact.create(
            method="whitening",
            params=params,
            backbone=BackboneRef(name="test", fingerprint=fingerprint, dim=d, pooling="mean"),
            corpus=CorpusRef(size=len(x), sha256="0" * 64),
            mu=mu,
            W=w,
        )

    return make


@pytest.fixture
def vectors():
    return np.random.default_rng(0).standard_normal((200, 8)) + 2.0


# Apps over real HTTP: the hashing backbone for the HTTP layer (tests/api, and the services' and core's tests).
CORPUS = [
    f"{a} {b} {c}"
    for a in ["the cat", "a dog", "my friend", "the plane", "a child", "the river"]
    for b in ["runs", "sleeps", "flies", "reads", "sings"]
    for c in ["at night", "in the park", "over the city", "with joy", "quietly"]
]


@pytest.fixture
def hashing_settings(make_settings, tmp_path):
    """Hashing backbone, with a whitening artifact for it bundled in a private models folder."""
    from app.backbones import build_backbone
    from app.correction.publication import write_artifact_file
    from app.offline.fit import fit_artifact

    settings = make_settings(backbone="hashing", max_texts=8, max_text_chars=200, max_k=20)
    backbone = build_backbone(settings)
    artifact = fit_artifact(backbone, CORPUS, "whitening", {"alpha": 0.5, "dim": 8}, progress=False)
    write_artifact_file(artifact, settings.models_dir / "hashing.npz")
    return settings


@pytest.fixture
def client(hashing_settings):
    from app.main import create_app

    with serve_app(create_app(hashing_settings)) as c:
        yield c
