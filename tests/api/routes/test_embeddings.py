"""/tokenize over real HTTP: the backbone's tokens and counts, under the same limits as /embed."""

from __future__ import annotations


def test_tokens_ids_and_counts_per_text(client):
    r = client.post("/tokenize", json={"texts": ["The cat sleeps", "a dog"]})
    assert r.status_code == 200
    body = r.json()
    assert body["model"] == "hashing" and body["max_length"] > 0
    first, second = body["texts"]
    assert first["tokens"] == ["the", "cat", "sleeps"] and len(first["ids"]) == 3
    assert first["count"] == 5 and first["truncated"] is False  # the hashing backbone counts [CLS] and [SEP] too
    assert second["tokens"] == ["a", "dog"]


def test_limits_are_embeds(client):
    assert client.post("/tokenize", json={"texts": []}).status_code == 422
    r = client.post("/tokenize", json={"texts": ["x" * 201]})  # max_text_chars is 200 here
    assert r.status_code == 422 and "at most 200" in r.json()["error"]["message"]
    assert client.post("/tokenize", json={"texts": [" "]}).status_code == 422
