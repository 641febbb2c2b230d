"""What is refused before any work is done: missing API keys, oversized bodies, texts over the token limit."""

from __future__ import annotations

import logging
import socket

import httpx
import pytest
from pydantic import SecretStr

from app.core.config import MODELS_DIR, Settings
from app.main import create_app
from tests.conftest import serve_app, with_graphs

KEYS = ["first-key-0123456789", "second-key-abcdef"]


@pytest.fixture(params=[pytest.param("onnx", marks=pytest.mark.model), "hashing"])
def guarded(request, hashing_settings, onnx_graphs, tmp_path):
    """The default backbone (ONNX int8, its bundled correction) and the weight-free one, behind the same guards."""
    served = hashing_settings
    if request.param == "onnx":
        data = with_graphs(onnx_graphs, tmp_path / "onnx-data")
        served = hashing_settings.model_copy(update={"backbone": "onnx", "models_dir": MODELS_DIR, "data_dir": data})
    settings = served.model_copy(
        update={"api_keys": [SecretStr(k) for k in KEYS], "max_body_bytes": 4096, "max_length": 12}
    )
    with serve_app(create_app(settings), timeout=600) as client:  # a first start exports and calibrates the graph
        yield client


def auth(key: str) -> dict:
    return {"Authorization": f"Bearer {key}"}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/embed", {"texts": ["a cat"]}),
        ("POST", "/similarity", {"pairs": [["a", "b"]]}),
        ("GET", "/search?q=cat", None),
        ("POST", "/search", {"q": "cat"}),
        ("POST", "/documents", {"documents": [{"text": "a cat"}]}),
        ("GET", "/documents/x", None),
        ("DELETE", "/documents/x", None),
        ("GET", "/info", None),
        ("GET", "/ready", None),
        ("GET", "/openapi.json", None),
        ("GET", "/no-such-route", None),
    ],
)
def test_every_route_but_health_needs_a_key(guarded, method, path, body):
    for headers in ({}, auth("wrong"), {"Authorization": KEYS[0]}, {"Authorization": f"Basic {KEYS[0]}"}):
        r = guarded.request(method, path, json=body, headers=headers)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert r.json()["error"]["type"] == "unauthorized"
    assert guarded.request(method, path, json=body, headers=auth(KEYS[1])).status_code != 401


def test_health_is_open_and_each_key_works(guarded):
    assert guarded.get("/health").status_code == 200
    for key in KEYS:
        assert guarded.post("/embed", json={"texts": ["a cat"]}, headers=auth(key)).status_code == 200


def test_keys_never_reach_the_logs_or_info(guarded, caplog):
    with caplog.at_level(logging.DEBUG):
        guarded.post("/embed", json={"texts": ["a cat"]}, headers=auth(KEYS[0]))
        guarded.post("/embed", json={"texts": ["a cat"]}, headers=auth("not-a-key-but-secret"))
        info = guarded.get("/info", headers=auth(KEYS[0])).text
    for secret in [*KEYS, "not-a-key-but-secret"]:
        assert secret not in caplog.text and secret not in info
    settings = Settings(api_keys=[SecretStr(k) for k in KEYS])
    printed = [repr(settings), str(settings), str(settings.model_dump()), settings.model_dump_json()]
    assert not any(key in text for key in KEYS for text in printed)  # SecretStr('**********') wherever printed
    assert [k.key.get_secret_value() for k in settings.api_keys] == KEYS


def test_bodies_over_the_limit_get_413_declared_or_chunked(guarded):
    big = {"texts": ["word " * 1000]}
    r = guarded.post("/embed", json=big, headers=auth(KEYS[0]))
    assert r.status_code == 413 and r.json()["error"]["type"] == "too_large"

    def chunks():
        yield b'{"texts": ["'
        for _ in range(100):
            yield b"word " * 20
        yield b'"]}'

    r = guarded.post("/embed", content=chunks(), headers={**auth(KEYS[0]), "content-type": "application/json"})
    assert r.status_code == 413
    headers = {**auth(KEYS[0]), "content-type": "application/json"}
    small = guarded.post("/embed", content=iter([b'{"texts": ', b'["a cat"]}']), headers=headers)
    assert small.status_code == 200  # a chunked body under the limit reaches the route intact


def test_texts_over_the_token_limit_are_cut_and_reported_or_refused(guarded):
    long_text = " ".join(["river"] * 30)  # 32 tokens with the two specials; the limit is 12
    body = {"texts": ["a short one", long_text]}
    r = guarded.post("/embed", json=body, headers=auth(KEYS[0]))
    assert r.status_code == 200 and r.json()["truncated"] == [1]
    # Its first 10 words, in a request of the same make-up (int8 vectors depend slightly on their batch-mates)
    same = {"texts": ["a short one", " ".join(["river"] * 10)]}
    cut = guarded.post("/embed", json=same, headers=auth(KEYS[0])).json()
    assert r.json()["embeddings"][1] == pytest.approx(cut["embeddings"][1], abs=1e-6)
    r = guarded.post("/embed", json={**body, "truncate": False}, headers=auth(KEYS[0]))
    assert r.status_code == 422 and r.json()["error"]["message"].startswith("texts[1]: 32 tokens, at most 12")
    # A document is never cut: over the window it is indexed as passages (here three of 10 words), whatever
    # the deprecated `truncate` says.
    docs = {"documents": [{"text": long_text, "id": "long"}], "truncate": False}
    assert guarded.post("/documents", json=docs, headers=auth(KEYS[0])).status_code == 201
    hit = guarded.get("/search", params={"q": "river", "mode": "dense"}, headers=auth(KEYS[0])).json()["results"][0]
    assert hit["id"] == "long" and hit["passage"]["text"] == " ".join(["river"] * 10)


@pytest.mark.parametrize(
    "content",
    [
        b'{"q": "cat", "score_threshold": NaN}',
        b'{"q": "cat", "score_threshold": Infinity}',
        b'{"q": "cat", "k": 1e400}',
    ],
)
def test_non_finite_numbers_are_422(client, content):
    r = client.post("/search", content=content, headers={"content-type": "application/json"})
    assert r.status_code == 422 and "error" in r.json()


def test_a_malformed_content_length_is_a_4xx(client):
    """httpx will not send one, so this goes over a plain socket."""
    url = httpx.URL(str(client.base_url))
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        sock.sendall(b'POST /embed HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{"texts": ["a"]}')
        status = sock.recv(4096).split(b"\r\n", 1)[0]
    assert status.startswith(b"HTTP/1.1 4"), status


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/embed", {"texts": ["a"] * 5000}, "at most 4096 items"),
        ("/similarity", {"source": "a", "targets": ["b"] * 5000}, "at most 4096 items"),
        ("/similarity", {"pairs": [["a", "b"]] * 5000}, "at most 4096 items"),
        ("/documents", {"documents": [{"text": "a"}] * 5000}, "at most 4096 items"),
        ("/v1/embeddings", {"model": "hashing", "input": ["a"] * 5000}, "at most 2048 items"),
        ("/documents", {"documents": [{"text": "a", "metadata": {"a": {"b": {"c": {"d": {"e": 1}}}}}}]}, "deep"),
        ("/documents", {"documents": [{"text": "a", "metadata": {f"k{i}": i for i in range(65)}}]}, "keys"),
        ("/documents", {"documents": [{"text": "a", "metadata": {"k": "x" * 17_000}}]}, "bytes"),
        ("/search", {"q": "a", "filter": {f"k{i}": i for i in range(33)}}, "at most 32 items"),
    ],
)
def test_lists_and_metadata_are_bounded_by_the_schema(client, path, body, message):
    r = client.post(path, json=body)
    assert r.status_code == 422 and message in r.json()["error"]["message"], r.text[:500]


def test_the_schema_publishes_its_bounds(client):
    """The served CE_MAX_TEXTS (8 here), under the hard 4,096 that holds whatever the settings."""
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert schemas["EmbedRequest"]["properties"]["texts"]["maxItems"] == 8
    assert schemas["DocumentsRequest"]["properties"]["documents"]["maxItems"] == 8


def test_a_body_of_a_million_tiny_texts_is_refused_before_python_objects_are_built(client):
    """7.8 MB of two-letter texts: Python's JSON parser would build 1.3 million strings (~80 MB) before the
    schema's 4,096-item bound applied; the bound is checked on the raw JSON first."""
    import json
    import tracemalloc

    body = json.dumps({"texts": ["ab"] * 1_300_000}).encode()
    tracemalloc.start()  # the app runs in this process (a uvicorn thread): its Python allocations are traced
    try:
        r = client.post("/embed", content=body, headers={"content-type": "application/json"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.status_code == 422 and "at most 4096 items" in r.json()["error"]["message"]
    assert peak < 40e6, f"{peak / 1e6:.0f} MB of Python objects for a refused body"


def test_the_streaming_count_sees_every_list_and_only_lists():
    import json

    from app.api.routing import holds_a_list_over

    def over(value, limit=3):
        return holds_a_list_over(json.dumps(value).encode(), limit)

    assert not over({"texts": ["a", "b", "c"]}) and over({"texts": ["a", "b", "c", "d"]})
    assert over({"pairs": [["a", "b"]] * 4}) and not over({"pairs": [["a", "b", "c"]] * 3})
    assert over({"documents": [{"text": "a", "metadata": {"k": [1, 2]}}] * 4})
    assert not over({"documents": [{"text": "a", "metadata": {"a": 1, "b": 2, "c": 3, "d": 4}}]})  # keys: no list
    assert over({"m": {"deep": [[1, 2, 3, 4]]}}) and not over([1, 2, 3]) and over([1, [2], {}, None])
    assert not holds_a_list_over(b'{"texts": ["a", ', 3)  # malformed: left to the JSON parser's own 422
