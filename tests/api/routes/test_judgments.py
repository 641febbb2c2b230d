"""Judgments over real HTTP: added or replaced by (query, id), listed, deleted by query or all; a collection that
does not exist is a 404. Tuning on them runs in tests/integration/test_judgments_tune.py."""

from __future__ import annotations

from tests.conftest import error_of


def test_judgments_are_added_replaced_listed_and_deleted(client):
    assert client.post("/collections", json={"name": "t"}).status_code == 201
    first = [{"query": "cat", "id": "a", "grade": 2}, {"query": "cat", "id": "b", "grade": 0}]
    assert client.post("/collections/t/judgments", json={"judgments": first}).status_code == 201
    again = client.post(
        "/collections/t/judgments",
        json={"judgments": [{"query": "cat", "id": "b", "grade": 3}, {"query": "dog", "id": "c", "grade": 1}]},
    )
    assert again.json() == {
        "judgments": [
            {"query": "cat", "id": "a", "grade": 2},
            {"query": "cat", "id": "b", "grade": 3},
            {"query": "dog", "id": "c", "grade": 1},
        ],
        "queries": 2,
    }
    assert client.delete("/collections/t/judgments", params={"query": "cat"}).status_code == 204
    assert client.get("/collections/t/judgments").json()["queries"] == 1
    error_of(client.delete("/collections/t/judgments", params={"query": "cat"}), 404)
    assert client.delete("/collections/t/judgments").status_code == 204
    assert client.get("/collections/t/judgments").json() == {"judgments": [], "queries": 0}
    error_of(client.get("/collections/nope/judgments"), 404)
