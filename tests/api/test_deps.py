"""Each route gets its collection's services: the default's at the root, a named one's under /collections/{name}/,
held while the request runs; a name that cannot exist is a 404 like one that does not."""

from __future__ import annotations

from tests.conftest import error_of


def test_the_same_routes_act_on_the_default_or_on_the_named_collection(client):
    assert client.post("/collections", json={"name": "t"}).status_code == 201
    assert client.post("/documents", json={"documents": [{"id": "d", "text": "in the default"}]}).status_code == 201
    assert client.post("/collections/t/documents", json={"documents": [{"id": "d", "text": "in t"}]}).status_code == 201
    assert client.get("/documents/d").json()["text"] == "in the default"
    assert client.get("/collections/t/documents/d").json()["text"] == "in t"
    assert client.get("/collections/default/documents/d").json()["text"] == "in the default"
    error_of(client.get("/collections/nope/documents/d"), 404)
    error_of(client.get("/collections/Not%20A%20Name/search", params={"q": "x"}), 404)
