"""The HTTP API over real HTTP, with the weight-free hashing backbone and a real Redis."""

import json
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from app.main import create_app
from tests.conftest import serve_app


def error_of(response, status):
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and {"type", "message"} <= set(body["error"])
    return body["error"]


def test_embed_returns_unit_corrected_vectors(client):
    r = client.post("/embed", json={"texts": ["the cat runs", "a dog sleeps"]})
    assert r.status_code == 200
    body = r.json()
    assert body["model"] == "hashing" and body["dim"] == 8 and body["correction"].startswith("whitening-")
    vectors = np.array(body["embeddings"])
    assert vectors.shape == (2, 8)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_embed_raw_and_unnormalized(client):
    raw = client.post("/embed", json={"texts": ["the cat runs"], "corrected": False, "normalize": False}).json()
    assert raw["correction"] is None and raw["dim"] == 64
    assert np.linalg.norm(raw["embeddings"][0]) > 1.5  # the backbone's own scale, not unit


def test_similarity_limit_counts_pairs_not_texts(client):
    assert client.post("/similarity", json={"pairs": [["a cat", "a dog"]] * 8}).status_code == 200


def test_similarity_pairs_and_source_targets_agree(client):
    pairs = client.post(
        "/similarity",
        json={"pairs": [["the cat runs", "the cat runs"], ["the cat runs", "the river sings"]], "compare_raw": True},
    ).json()
    assert pairs["scores"][0] == pytest.approx(1.0, abs=1e-5)
    assert pairs["scores"][1] < pairs["scores"][0]
    assert len(pairs["raw_scores"]) == 2 and pairs["correction"]
    st = client.post("/similarity", json={"source": "the cat runs", "targets": ["the cat runs", "the river sings"]})
    assert st.json()["scores"] == pytest.approx(pairs["scores"], abs=1e-6)
    assert "raw_scores" not in st.json()


def test_documents_search_get_delete(client):
    docs = [
        {"id": "cat", "text": "the cat sleeps in the park", "metadata": {"kind": "animal"}},
        {"id": "plane", "text": "the plane flies over the city"},
        {"text": "a child reads with joy"},
    ]
    r = client.post("/documents", json={"documents": docs})
    assert r.status_code == 201
    ids = r.json()["ids"]
    assert ids[:2] == ["cat", "plane"] and len(ids[2]) == 16
    hit = client.get("/search", params={"q": "the plane flies over the city", "k": 2}).json()
    assert [h["id"] for h in hit["results"]][0] == "plane"
    assert hit["results"][0]["score"] == pytest.approx(1.0, abs=1e-4) and hit["correction"]
    assert client.get("/documents/cat").json() == {
        "id": "cat",
        "text": "the cat sleeps in the park",
        "metadata": {"kind": "animal"},
    }
    assert client.delete("/documents/plane").status_code == 204
    after = client.get("/search", params={"q": "the plane flies over the city", "k": 10}).json()
    assert "plane" not in [h["id"] for h in after["results"]] and len(after["results"]) == 2
    error_of(client.delete("/documents/plane"), 404)
    error_of(client.get("/documents/plane"), 404)
    assert client.get("/info").json()["index"]["size"] == 2


def test_search_filters_on_metadata_and_drops_scores_below_the_threshold(client):
    docs = [
        {"id": f"{lang}-{i}", "text": text, "metadata": {"lang": lang, "n": i}}
        for lang in ("en", "fr")
        for i, text in enumerate(["the cat sleeps", "a dog runs at night", "the river sings quietly"])
    ]
    assert client.post("/documents", json={"documents": docs[:4]}).status_code == 201
    assert client.post("/documents", json={"documents": docs[4:]}).status_code == 201
    q = "the cat sleeps"
    everything = client.get("/search", params={"q": q, "k": 20}).json()["results"]
    assert len(everything) == 6
    french = client.get("/search", params={"q": q, "filter": '{"lang": "fr"}'}).json()["results"]
    assert {h["id"] for h in french} == {"fr-0", "fr-1", "fr-2"} and french[0]["id"] == "fr-0"
    both = client.post("/search", json={"q": q, "filter": {"lang": "en", "n": 1}}).json()["results"]
    assert [h["id"] for h in both] == ["en-1"]
    cut = sorted(h["score"] for h in everything)[-3]  # keeps the best three, and any tied with the third
    kept = client.post("/search", json={"q": q, "k": 20, "score_threshold": cut}).json()["results"]
    assert {h["id"] for h in kept} == {h["id"] for h in everything if h["score"] >= cut}
    assert 3 <= len(kept) < len(everything) and all(h["score"] >= cut for h in kept)
    assert client.post("/search", json={"q": q, "filter": {"lang": "de"}}).json()["results"] == []


@pytest.mark.parametrize(
    "params",
    [
        {"q": "x", "filter": "not json"},
        {"q": "x", "filter": "[1, 2]"},
        {"q": "x", "filter": '{"tags": ["a"]}'},
        {"q": "x", "filter": "{}"},
        {"q": "x", "score_threshold": 1.5},
    ],
)
def test_bad_filters_and_thresholds_are_422(client, params):
    assert "message" in error_of(client.get("/search", params=params), 422)


def test_same_text_twice_is_one_document(client):
    first = client.post("/documents", json={"documents": [{"text": "a dog sings"}]}).json()["ids"]
    again = client.post("/documents", json={"documents": [{"text": "a dog sings"}, {"text": "a dog sings"}]})
    assert again.json()["ids"] == first
    assert client.get("/info").json()["index"]["size"] == 1


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/embed", {"texts": []}, 422),
        ("/embed", {"texts": [""]}, 422),
        ("/embed", {"texts": ["   "]}, 422),
        ("/embed", {"texts": [1, 2]}, 422),
        ("/embed", {"texts": "not a list"}, 422),
        ("/embed", {"texts": ["ok"], "extra": 1}, 422),
        ("/embed", {"texts": ["ok"], "normalize": "yes"}, 422),
        ("/embed", {"texts": ["x"] * 9}, 422),
        ("/embed", {"texts": ["x" * 201]}, 422),
        ("/similarity", {"pairs": [["a", "b"]] * 9}, 422),
        ("/embed", {}, 422),
        ("/similarity", {"pairs": [["only one"]]}, 422),
        ("/similarity", {"pairs": []}, 422),
        ("/similarity", {"source": "a"}, 422),
        ("/similarity", {"pairs": [["a", "b"]], "source": "a", "targets": ["b"]}, 422),
        ("/documents", {"documents": [{"text": ""}]}, 422),
        ("/documents", {"documents": [{"text": "ok", "id": ""}]}, 422),
        ("/documents", {"documents": [{"text": "ok", "colour": "red"}]}, 422),
        ("/search", {"q": "x", "k": 21}, 422),
        ("/search", {"q": "x", "filter": {"a": {"b": 1}}}, 422),
        ("/search", {"q": ""}, 422),
    ],
)
def test_bad_bodies_get_a_4xx_with_an_error_object(client, path, body, status):
    err = error_of(client.post(path, json=body), status)
    assert err["message"]


@pytest.mark.parametrize("params", [{"q": "x", "k": 0}, {"q": "x", "k": 21}, {"q": "x", "k": "ten"}, {"q": "  "}, {}])
def test_bad_search_parameters(client, params):
    error_of(client.get("/search", params=params), 422)


def test_malformed_json_and_unknown_routes(client):
    r = client.post("/embed", content=b"{not json", headers={"content-type": "application/json"})
    error_of(r, 422)
    r = client.post("/embed", content=b'{"texts": ["\xff\xfe"]}', headers={"content-type": "application/json"})
    assert 400 <= r.status_code < 500
    error_of(client.get("/nope"), 404)
    error_of(client.put("/embed", json={}), 405)


def test_health_ready_info(client):
    assert client.get("/health").json() == {"status": "ok"}
    ready = client.get("/ready")
    assert ready.status_code == 200 and ready.json()["ready"] is True
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


def test_the_published_schema_states_the_limits_this_server_enforces(client):
    schema = client.get("/openapi.json").json()
    assert "x-served" not in json.dumps(schema)
    bodies = schema["components"]["schemas"]
    texts = bodies["EmbedRequest"]["properties"]["texts"]
    assert (texts["maxItems"], texts["items"]["maxLength"]) == (8, 200)  # CE_MAX_TEXTS, CE_MAX_TEXT_CHARS here
    k = next(p for p in schema["paths"]["/search"]["get"]["parameters"] if p["name"] == "k")
    assert k["schema"]["maximum"] == 20 and bodies["SearchRequest"]["properties"]["k"]["maximum"] == 20
    collection = bodies["CollectionIn"]["properties"]
    assert collection["backbone"]["anyOf"] == [{"type": "string", "enum": ["hashing"]}, {"type": "null"}]
    assert collection["model_path"]["anyOf"] == [{"type": "null"}]  # CE_COLLECTION_MODELS is empty
    forms = [sorted(f["required"]) for f in bodies["SimilarityRequest"]["oneOf"]]
    assert forms == [["pairs"], ["source", "targets"]]
    assert [f["properties"]["method"].get("const") for f in bodies["FitRequest"]["oneOf"]] == [
        None,
        "whitening",
        "abtt",
    ]
    # ...and the server refuses what the schema leaves out.
    assert client.post("/embed", json={"texts": ["a"] * 9}).status_code == 422
    assert client.get("/search", params={"q": "a", "k": 21}).status_code == 422
    both = {"pairs": [["a", "b"]], "source": "a", "targets": ["b"]}
    assert client.post("/similarity", json=both).status_code == 422
    assert client.post("/collections", json={"name": "x", "pooling": "cls"}).status_code == 201
    assert client.post("/collections/x/fit", json={"method": "center", "alpha": 0.5}).status_code == 422


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
