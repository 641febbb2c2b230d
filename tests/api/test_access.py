"""Scoped keys over real HTTP: read-only keys are refused every write route, limited keys every other collection."""

from __future__ import annotations

import json

import pytest

from app.api.access import needed_scope
from app.api.deps import NAME_PATTERN
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
    ("POST", "/documents/get", {"ids": ["d1"]}),
    ("POST", "/documents/count", {}),
]


def test_each_route_reads_or_writes_as_the_one_table_says(served):
    app, _ = served
    reads = {(m, p.split("?")[0]) for m, p, _ in READS}
    published = {(m.upper(), p) for p, ops in app.openapi()["paths"].items() for m in ops}
    assert {("POST", "/documents/get"), ("POST", "/documents/count")} <= published & reads
    assert not reads & set(write_routes(app))


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


# --- every way to a collection, generated from the published schema -------------------------------------------------

KEYLESS_PATHS = {"/health", "/"}  # the probe and the static page (its calls send the key typed into it)
NO_COLLECTION = {("GET", "/health"), ("GET", "/ready"), ("GET", "/collections"), ("GET", "/v1/models"), ("GET", "/")}
NO_COLLECTION |= {("POST", "/v1/embeddings")}  # its body names the collection (`model`)
UNPUBLISHED = [("GET", "/"), ("GET", "/metrics"), ("GET", "/pictures/documents-beta.png")]  # include_in_schema=False
SIDE_EFFECTS = {"DELETE", "PUT"} | {("POST", "/collections/{name}/tune"), ("POST", "/collections/{name}/verify")}
WHO = {"admin": None, "reader": None, "alpha-writer": "alpha", "alpha-reader": "alpha", "nobody": None}


def operations(app) -> list[tuple[str, str, list[str]]]:
    """Every published operation with its body's fields that name a collection, and the unpublished routes."""
    published = app.openapi()
    schemas = published["components"]["schemas"]
    found = []
    for path, ops in published["paths"].items():
        for method, op in ops.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            body = schemas.get(body.get("$ref", "").rsplit("/", 1)[-1], body)
            naming = [f for f, s in body.get("properties", {}).items() if NAME_PATTERN in json.dumps(s)]
            found.append((method.upper(), path, naming))
    return found + [(m, p, []) for m, p in UNPUBLISHED]


def refused(who: str, method: str, path: str, names: set[str], by_path: bool) -> bool:
    """The policy: 401 without a key but on the open paths; 403 for a read key's writes; 403 for a limited key on
    any collection not its own, the default one (the root routes) included, and on what acts on every collection
    (a route whose path names none: creating one, /info, /metrics, the pictures)."""
    if who == "nobody":
        return path not in KEYLESS_PATHS
    if who.endswith("reader") and needed_scope(method, path) == "write":
        return True
    limit = WHO[who]
    if limit is None:
        return False
    if not by_path and (method, path) not in NO_COLLECTION:
        return True
    return any(n != limit for n in names)


def test_no_key_reaches_past_its_scope_by_any_route_or_body_field(served):
    app, http = served
    model = app.state.services.backbone.name
    checked = breaches = 0
    on_default = {p for _, p, _ in operations(app) if "/collections/{name}" + p in app.openapi()["paths"]}
    for method, path, naming in operations(app):
        for target in ("alpha", "beta"):
            for value in {target, "default", model} if naming else {None}:
                names = {target} if "{name}" in path and path.startswith("/collections/") else set()
                names |= {"default"} if path in on_default else set()
                by_path = bool(names)
                names |= {"default" if value == model else value} if value else set()
                for who in WHO:
                    expected = refused(who, method, path, names, by_path)
                    if not expected and (method in SIDE_EFFECTS or (method, path) in SIDE_EFFECTS):
                        continue  # allowed and not harmless: the refusals are what this test is about
                    body = {"unknown field": 1, **{f: value for f in naming}} if method != "GET" else None
                    headers = auth(who) if who != "nobody" else {}
                    r = http.request(method, concrete(path, target), json=body, headers=headers)
                    checked += 1
                    if expected != (r.status_code in (401, 403)):
                        breaches += 1
                        print(f"{who} {method} {concrete(path, target)} {value}: {r.status_code} {r.text[:200]}")
    assert breaches == 0
    assert checked > 400  # every operation, both collections, every key (but allowed writes with side effects)


def test_the_named_cases_of_the_trust_issue(served):
    _, http = served
    v1 = {"input": "hi", "model": "beta"}
    assert http.post("/v1/embeddings", json=v1, headers=auth("alpha-writer")).status_code == 403
    assert http.post("/v1/embeddings", json={**v1, "model": "default"}, headers=auth("alpha-reader")).status_code == 403
    assert http.post("/v1/embeddings", json={**v1, "model": "alpha"}, headers=auth("alpha-reader")).status_code == 200
    models = http.get("/v1/models", headers=auth("alpha-reader")).json()["data"]
    assert [m["id"] for m in models] == ["alpha"]
    assert http.get("/metrics", headers=auth("alpha-reader")).status_code == 403
    assert http.get("/metrics", headers=auth("reader")).status_code == 200
    assert http.get("/info", headers=auth("alpha-writer")).status_code == 403
    assert http.get("/").status_code == 200  # the static page, no data in it
    # A limited key deletes its collection, then may not create it again by an import (with any settings).
    exported = http.get("/collections/alpha/export", headers=auth("alpha-reader")).text
    assert http.delete("/collections/alpha", headers=auth("alpha-writer")).status_code == 204
    ndjson = {**auth("alpha-writer"), "content-type": "application/x-ndjson"}
    r = http.post("/collections/alpha/import", content=exported, headers=ndjson)
    assert r.status_code == 403 and "needs a key for all" in r.json()["error"]["message"]
    assert http.get("/collections/alpha", headers=auth("admin")).status_code == 404
    admin = {**auth("admin"), "content-type": "application/x-ndjson"}
    assert http.post("/collections/alpha/import", content=exported, headers=admin).json()["created"] is True
    assert http.post("/collections/alpha/import", content=exported, headers=ndjson).json()["skipped"] == 1
