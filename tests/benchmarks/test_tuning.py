"""`bench-tune`'s client: one request's status and JSON answer, an error's body kept, with no HTTP library."""

from __future__ import annotations

from app.benchmarks.tuning import call


def test_status_and_answer_of_each_request(client):
    url = str(client.base_url).rstrip("/")
    status, created = call(url, "/collections", {"name": "t"})
    assert status == 201 and created["name"] == "t"
    assert call(url, "/collections/t")[1]["state"] == "ready"
    status, body = call(url, "/collections", {"name": "t"})
    assert status == 409 and "exists" in body
    assert call(url, "/collections/t", method="DELETE") == (204, None)
