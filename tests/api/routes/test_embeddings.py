"""/tokenize over real HTTP: the backbone's tokens and counts, under the same limits as /embed."""

from __future__ import annotations

import numpy as np
import pytest


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
