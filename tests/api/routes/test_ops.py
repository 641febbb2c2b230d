"""Liveness under trouble: a deadline on the encoder, probes that answer under saturation, a dead encoder seen."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.backbones.hashing import HashingBackbone
from app.main import create_app
from app.services.container import Services
from tests.conftest import error_of, serve_app


class Gated(HashingBackbone):
    """Encodes only while the gate is open, so requests can be held in the encoder's queue."""

    def __init__(self):
        super().__init__(dim=8)
        self.gate = threading.Event()
        self.gate.set()

    def encode(self, texts, token_weights=None):
        if "fatal" in texts:
            raise SystemExit("the encoder thread ends")
        self.gate.wait(30)
        return super().encode(texts, token_weights)


@pytest.fixture
def gated(make_settings):
    """An app whose backbone can be held, a 1 s request deadline; yields (client, backbone)."""
    settings = make_settings(backbone="hashing", correction="none", request_timeout=1.0, max_queue_texts=100_000)
    backbone = Gated()
    services = Services.from_settings(settings, backbone=backbone)
    try:
        with serve_app(create_app(settings, services)) as client:
            yield client, backbone
    finally:
        backbone.gate.set()
        services.close()


def test_a_request_past_its_deadline_is_a_504_and_the_encoder_goes_on(gated):
    client, backbone = gated
    backbone.gate.clear()
    started = time.monotonic()
    err = error_of(client.post("/embed", json={"texts": ["held"]}), 504)
    assert err["type"] == "timeout" and "CE_REQUEST_TIMEOUT" in err["message"]
    assert 0.9 <= time.monotonic() - started < 5
    error_of(client.post("/documents", json={"documents": [{"id": "d", "text": "held"}]}), 504)  # sync route too
    backbone.gate.set()
    assert client.post("/embed", json={"texts": ["after"]}).status_code == 200  # the cancelled jobs did no harm
    assert client.get("/ready").status_code == 200


def test_health_and_ready_answer_while_every_worker_thread_waits_on_the_encoder(gated):
    client, backbone = gated
    backbone.gate.clear()
    body = {"documents": [{"id": "x", "text": "waits"}]}
    with ThreadPoolExecutor(60) as pool:  # more than the thread pool's 40: sync routes hold every thread
        held = [pool.submit(client.post, "/documents", json=body) for _ in range(60)]
        time.sleep(0.3)
        for path in ("/health", "/ready"):
            started = time.monotonic()
            assert client.get(path, timeout=3).status_code == 200
            assert time.monotonic() - started < 0.5, path
        assert [f.result().status_code for f in held] == [504] * 60  # their deadline passed with the gate shut


def test_ready_is_503_once_the_encoder_has_stopped(gated):
    client, _ = gated
    assert client.get("/ready").json()["checks"]["encoder"] is True
    error_of(client.post("/embed", json={"texts": ["fatal"]}), 503)
    ready = client.get("/ready")
    assert ready.status_code == 503 and ready.json()["checks"] == {"store": True, "encoder": False}
    err = error_of(client.post("/embed", json={"texts": ["anything"]}), 503)
    assert "encoder is not running" in err["message"]


def test_tokenizing_long_texts_does_not_hold_up_the_event_loop(make_settings):
    """A request of long texts is counted on a worker thread: while that is held, the loop answers others."""

    class SlowCounting(HashingBackbone):
        def __init__(self):
            super().__init__(dim=8, max_length=16)
            self.counting, self.release = threading.Event(), threading.Event()

        def token_counts(self, texts):
            if any(len(t) > 1000 for t in texts):
                self.counting.set()
                self.release.wait(10)
            return super().token_counts(texts)

    settings = make_settings(backbone="hashing", correction="none", max_length=16)
    backbone = SlowCounting()
    services = Services.from_settings(settings, backbone=backbone)
    try:
        with serve_app(create_app(settings, services)) as client, ThreadPoolExecutor(1) as pool:
            long = pool.submit(client.post, "/embed", json={"texts": ["word " * 1000], "truncate": False})
            assert backbone.counting.wait(5)
            started = time.monotonic()
            assert client.post("/embed", json={"texts": ["short"]}, timeout=5).status_code == 200
            assert time.monotonic() - started < 1.0
            backbone.release.set()
            assert long.result().status_code == 422
    finally:
        backbone.release.set()
        services.close()


def test_health_ready_info(client):
    assert client.get("/health").json() == {"status": "ok"}
    ready = client.get("/ready")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    assert ready.json()["writes"] == {"accepted": True, "refused_because": None}  # a cluster says why when not
    info = client.get("/info").json()
    assert info["backbone"]["name"] == "hashing" and info["dim"] == 8
    assert info["correction"]["method"] == "whitening" and info["correction"]["params"]["alpha"] == 0.5
    assert info["correction"]["corpus"]["size"] == 150 and info["index"]["correction"] == info["correction"]["id"]
    assert info["limits"] == {
        "max_texts": 8,
        "max_text_chars": 200,
        "max_tokens": 256,
        "max_body_bytes": 8_000_000,
        "max_k": 20,
        "max_queue_texts": 2048,
        "max_request_tokens": 262_144,
        "max_fits": 1,
        "max_items": 4096,
        "max_filter_keys": 32,
        "max_metadata_keys": 64,
        "max_metadata_depth": 4,
        "max_metadata_bytes": 16_384,
    }
