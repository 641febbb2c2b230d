"""`bench-fairness`'s load: long distinct documents, and the encoder's counters read from a real server."""

from __future__ import annotations

from app.benchmarks.fairness import encoder_counts, long_documents, timed_post


def test_long_documents_are_distinct_sized_and_reproducible():
    docs = long_documents(5, 400, ["river", "stone", "cloud"], seed=3)
    assert len({d["text"] for d in docs}) == 5 and all(len(d["text"]) <= 400 for d in docs)
    assert docs == long_documents(5, 400, ["river", "stone", "cloud"], seed=3) and docs[0]["id"] == "long-3-0"


def test_counters_and_a_timed_request_against_a_real_server(client):
    url = str(client.base_url).rstrip("/")
    status, seconds = timed_post(url, "/embed", {"texts": ["a cat"]})
    assert status == 200 and 0 <= seconds < 30  # rounded to 10 ms: a quick answer reads 0.0
    counts = encoder_counts(url)
    assert counts and all(value >= 0 for value in counts.values())
