"""One real server for the client's tests: `python -m app serve` with the default backbone (ONNX int8, the real
all-MiniLM-L6-v2) on its embedded Redis, the way `make run` starts it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.benchmarks.http import free_port
from corrected_embeddings_client import Client
from tests.conftest import server_env, start_server, stop_server, with_graphs

API_KEY = "client-test-key"


@contextmanager
def keyed_server(folder: Path, onnx_graphs: Path) -> Iterator[str]:
    """`python -m app serve` in `folder` with the session's exported graphs and one key; its URL while it runs."""
    with_graphs(onnx_graphs, folder / "data")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_server(server_env(folder, port, CE_API_KEYS=f'["{API_KEY}"]'), url)
    try:
        yield url
    finally:
        stop_server(proc)


@pytest.fixture(scope="session")
def server_url(tmp_path_factory, onnx_graphs) -> Iterator[str]:
    with keyed_server(tmp_path_factory.mktemp("client-server"), onnx_graphs) as url:
        yield url


@pytest.fixture(scope="session")
def client(server_url) -> Iterator[Client]:
    with Client(server_url, API_KEY) as c:
        yield c


@pytest.fixture
def collection(client) -> Iterator[str]:
    """A new empty collection on the default backbone, dropped after the test."""
    name = f"c-{uuid.uuid4().hex[:10]}"
    client.create_collection(name)
    client.wait_ready(name)
    yield name
    client.delete_collection(name)
