"""The HTTP API over real HTTP, with the weight-free hashing backbone and a real Redis."""

import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from app.main import create_app
from tests.conftest import error_of, serve_app


def test_documents_survive_a_restart_and_correction_is_cached(hashing_settings, store):
    with serve_app(create_app(hashing_settings)) as c:
        c.post("/documents", json={"documents": [{"id": "keep", "text": "the river sings quietly"}]})
        c.post("/documents", json={"documents": [{"id": "gone", "text": "my friend reads at night"}]})
        c.delete("/documents/gone")
        correction = c.get("/info").json()["correction"]["id"]
    # The correction now lives in Redis: a restart without the bundled file still serves it.
    for f in hashing_settings.models_dir.glob("*.npz"):
        f.unlink()
    with serve_app(create_app(hashing_settings)) as c:
        info = c.get("/info").json()
        assert info["correction"]["id"] == correction and info["index"]["size"] == 1
        hits = c.get("/search", params={"q": "the river sings quietly"}).json()["results"]
        assert [h["id"] for h in hits] == ["keep"]


def test_redis_down_gives_503_for_writes_and_recovers_when_back(hashing_settings, tmp_path):
    """A real redis-server stopped and started again under a running service."""
    from app.store import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "own-redis")
    settings = hashing_settings.model_copy(update={"redis_url": server.start()})
    with serve_app(create_app(settings)) as c:
        assert c.post("/documents", json={"documents": [{"id": "a", "text": "a dog runs"}]}).status_code == 201
        server.stop()
        err = error_of(c.post("/documents", json={"documents": [{"id": "b", "text": "the cat flies"}]}), 503)
        assert err["type"] == "store_unavailable"
        where = urllib.parse.urlsplit(settings.redis_url)  # nothing about where Redis is goes to the client
        address = [part for part in (where.hostname, where.port and str(where.port), where.path.strip("/")) if part]
        assert address and not any(part in err["message"] for part in address), err["message"]
        assert c.post("/embed", json={"texts": ["still works"]}).status_code == 200
        assert c.post("/similarity", json={"pairs": [["a", "b"]]}).status_code == 200
        ready = c.get("/ready")
        assert ready.status_code == 503 and ready.json()["checks"]["store"] is False
        assert ready.json()["status"] == "degraded"
        server = EmbeddedRedis(tmp_path / "own-redis")
        server.start()
        assert c.get("/ready").status_code == 200
        assert c.post("/documents", json={"documents": [{"id": "b", "text": "the cat flies"}]}).status_code == 201
        hits = c.get("/search", params={"q": "a dog runs", "k": 5}).json()["results"]
        assert sorted(h["id"] for h in hits) == ["a", "b"]
    server.stop()


def test_a_flood_beyond_the_queue_gets_429_with_retry_after(make_settings):
    from app.backbones.hashing import HashingBackbone
    from app.services.container import Services

    gate = threading.Event()

    class Gated(HashingBackbone):
        def encode(self, texts):
            gate.wait(10)
            return super().encode(texts)

    settings = make_settings(backbone="hashing", correction="none", max_queue_texts=4)
    gate.set()  # let the start-up warm-up through
    service = Services.from_settings(settings, backbone=Gated(dim=8))
    gate.clear()
    try:
        with serve_app(create_app(settings, service)) as client, ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(client.post, "/embed", json={"texts": ["a b", "c d"]}) for _ in range(8)]
            deadline = time.monotonic() + 10
            while sum(f.done() for f in futures) < 5 and time.monotonic() < deadline:
                time.sleep(0.02)  # the sixth and later requests find the queue full and return at once
            gate.set()
            responses = [f.result() for f in futures]
    finally:
        gate.set()
        service.close()
    codes = sorted(r.status_code for r in responses)
    assert codes.count(200) >= 2 and codes.count(429) >= 5, codes
    shed = next(r for r in responses if r.status_code == 429)
    assert int(shed.headers["Retry-After"]) >= 1 and error_of(shed, 429)["type"] == "overloaded"


def test_concurrent_clients_each_get_their_own_vectors(client):
    texts = [[f"client {c} says {w}" for w in ("cat dog", "river", "a b c d", "sun")] for c in range(12)]
    with ThreadPoolExecutor(12) as pool:
        bodies = list(pool.map(lambda t: client.post("/embed", json={"texts": t}).json(), texts))
    for request, body in zip(texts, bodies, strict=True):
        alone = client.post("/embed", json={"texts": request}).json()  # sent alone: a round of its own
        np.testing.assert_allclose(np.array(body["embeddings"]), np.array(alone["embeddings"]), atol=1e-5)
