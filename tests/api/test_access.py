"""Scoped keys over real HTTP: read-only keys are refused every write route, limited keys every other collection."""

from __future__ import annotations

import pytest

from app.api.access import needed_scope
from app.core.access import ApiKey
from app.main import create_app
from tests.conftest import serve_app

KEYS = {
    "admin": "admin-key-000",
    "reader": "reader-key-000",
    "alpha-writer": "alpha-writer-000",
    "alpha-reader": "alpha-reader-000",
}
SCOPES = [
    KEYS["admin"],
    {"key": KEYS["reader"], "scope": "read"},
    {"key": KEYS["alpha-writer"], "collections": ["alpha"]},
    {"key": KEYS["alpha-reader"], "scope": "read", "collections": ["alpha"]},
]


def auth(who: str) -> dict:
    return {"Authorization": f"Bearer {KEYS[who]}"}


@pytest.fixture
def served(hashing_settings):
    settings = hashing_settings.model_copy(update={"api_keys": [ApiKey.model_validate(k) for k in SCOPES]})
    app = create_app(settings)
    with serve_app(app) as http:
        for name in ("alpha", "beta"):
            assert http.post("/collections", json={"name": name}, headers=auth("admin")).status_code == 201
            docs = {"documents": [{"id": "d1", "text": "the cat sleeps"}]}
            assert http.post(f"/collections/{name}/documents", json=docs, headers=auth("admin")).status_code == 201
        assert http.post("/documents", json=docs, headers=auth("admin")).status_code == 201
        yield app, http


def concrete(path: str, collection: str) -> str:
    return path.replace("{name}", collection).replace("{doc_id}", "d1")


def write_routes(app) -> list[tuple[str, str]]:
    """Every route that writes, as the app publishes them: one added later is covered without editing this test."""
    paths = app.openapi()["paths"]
    return sorted((m.upper(), p) for p, ops in paths.items() for m in ops if needed_scope(m.upper(), p) == "write")


READS = [
    ("GET", "/search?q=cat", None),
    ("POST", "/search", {"q": "cat"}),
    ("POST", "/embed", {"texts": ["a cat"]}),
    ("POST", "/similarity", {"pairs": [["a cat", "a dog"]]}),
    ("GET", "/documents/d1", None),
]


def test_a_read_only_key_gets_403_on_every_write_route_naming_its_scope(served):
    app, http = served
    writes = write_routes(app)
    assert {("POST", "/documents"), ("DELETE", "/collections/{name}"), ("POST", "/collections")} <= set(writes)
    for method, path in writes:
        url = concrete(path, "alpha")
        r = http.request(method, url, json={}, headers=auth("reader"))
        assert r.status_code == 403, (method, path, r.text)
        assert r.json()["error"] == {
            "type": "forbidden",
            "message": f"this key is read-only: {method} {url} needs a write key",
        }
    assert http.get("/collections/alpha/documents/d1", headers=auth("admin")).status_code == 200  # nothing happened


@pytest.mark.parametrize("prefix", ["", "/collections/alpha", "/collections/beta"])
def test_a_read_only_key_reads_every_collection(served, prefix):
    _, http = served
    for method, path, body in READS:
        assert http.request(method, prefix + path, json=body, headers=auth("reader")).status_code == 200, path
    for path in ("/info", "/collections", "/collections/alpha", "/v1/models"):
        assert http.get(path, headers=auth("reader")).status_code == 200


def test_a_key_limited_to_one_collection_gets_403_on_another(served):
    _, http = served
    for who in ("alpha-writer", "alpha-reader"):
        for method, path, body in READS:
            assert http.request(method, "/collections/alpha" + path, json=body, headers=auth(who)).status_code == 200
            for other in ("/collections/beta", ""):  # the default collection is another one
                r = http.request(method, other + path, json=body, headers=auth(who))
                assert r.status_code == 403 and "limited to collections alpha" in r.json()["error"]["message"]
        assert [c["name"] for c in http.get("/collections", headers=auth(who)).json()["collections"]] == ["alpha"]
        assert http.post("/collections", json={"name": "gamma"}, headers=auth(who)).status_code == 403
    new = {"documents": [{"id": "d2", "text": "a dog runs"}]}
    assert http.post("/collections/alpha/documents", json=new, headers=auth("alpha-writer")).status_code == 201
    assert http.post("/collections/beta/documents", json=new, headers=auth("alpha-writer")).status_code == 403
    assert http.delete("/collections/beta", headers=auth("alpha-writer")).status_code == 403
    assert http.get("/collections/beta/documents/d2", headers=auth("admin")).status_code == 404


def test_a_bare_token_still_reads_and_writes_everything(served):
    _, http = served
    assert http.delete("/collections/beta", headers=auth("admin")).status_code == 204
