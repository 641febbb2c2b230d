"""Traces with the SDK's in-memory exporter: one request's span, its request id, and its children."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from app.benchmarks.http import free_port
from app.core import tracing
from app.main import create_app
from tests.conftest import serve_app, server_env, server_log, start_server, stop_server


@pytest.fixture
def traced(hashing_settings):
    app = create_app(hashing_settings)
    exporter = InMemorySpanExporter()
    uninstall = tracing.install(app, exporter=exporter)
    with serve_app(app) as http:
        yield http, exporter
    uninstall()


def test_a_search_is_one_trace_with_its_request_id_and_children(traced):
    http, exporter = traced
    assert http.post("/documents", json={"documents": [{"id": "a", "text": "the cat sleeps"}]}).status_code == 201
    exporter.clear()
    r = http.post("/search", json={"q": "cat", "mode": "hybrid"}, headers={"X-Request-ID": "req-42"})
    assert r.status_code == 200 and r.headers["x-request-id"] == "req-42"
    spans = exporter.get_finished_spans()
    (request,) = [s for s in spans if s.attributes.get("http.request_id") == "req-42"]
    assert request.name == "POST /search" and request.parent is None
    assert {s.context.trace_id for s in spans} == {request.context.trace_id}  # one trace, nothing else in it
    names = [s.name for s in spans]
    for child in ("encoder.round", "index.dense_search", "index.lexical_search"):
        assert names.count(child) == 1, names
    redis = [s for s in spans if s.attributes.get("db.system") == "redis"]
    assert redis and all(s.parent is not None for s in redis)  # reading the hits back from the store
    by_id = {s.context.span_id: s for s in spans}

    def root(s):
        while s.parent is not None:
            s = by_id[s.parent.span_id]
        return s

    assert all(root(s) is request for s in spans)


def test_off_without_an_endpoint(hashing_settings, monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    assert tracing.install(create_app(hashing_settings)) is None


@pytest.mark.process
def test_a_real_server_sends_its_spans_to_the_otlp_endpoint(tmp_path):
    """`python -m app serve` with OTEL_EXPORTER_OTLP_ENDPOINT: OTLP/HTTP posts reach a collector (here a bare one)."""
    received: list[tuple[str, bytes]] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server hook's name
            received.append((self.path, self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    collector = HTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    port = free_port()
    env = server_env(
        tmp_path, port, CE_BACKBONE="hashing", OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{collector.server_port}"
    )
    server = start_server(env, f"http://127.0.0.1:{port}")
    try:
        r = httpx.post(f"http://127.0.0.1:{port}/embed", json={"texts": ["a cat"]}, headers={"X-Request-ID": "req-77"})
        assert r.status_code == 200
    finally:
        stop_server(server)  # a graceful stop flushes the batch of spans
        collector.shutdown()
    bodies = [body for path, body in received if path == "/v1/traces"]
    assert bodies, server_log(server)[-3000:]
    assert bodies and any(b"req-77" in body and b"encoder.round" in body for body in bodies)
