"""The HTTP API over real HTTP, with the weight-free hashing backbone and a real Redis."""

import pytest

from tests.conftest import error_of


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


def test_same_text_twice_is_one_document(client):
    first = client.post("/documents", json={"documents": [{"text": "a dog sings"}]}).json()["ids"]
    again = client.post("/documents", json={"documents": [{"text": "a dog sings"}, {"text": "a dog sings"}]})
    assert again.json()["ids"] == first
    assert client.get("/info").json()["index"]["size"] == 1
