"""Ingestion checkpoints in a real Redis: one per corpus file, per collection, dropped with it."""

from __future__ import annotations


def test_checkpoints_are_kept_per_source_and_collection(store):
    checkpoints = store.ingestion
    assert checkpoints.get("c1", "docs.jsonl") is None
    checkpoints.put("c1", "docs.jsonl", b"offset=10")
    checkpoints.put("c1", "docs.jsonl", b"offset=20")
    checkpoints.put("c1", "other.txt", b"offset=5")
    checkpoints.put("c2", "docs.jsonl", b"offset=7")
    assert checkpoints.get("c1", "docs.jsonl") == b"offset=20" and checkpoints.get("c1", "other.txt") == b"offset=5"
    checkpoints.drop("c1")
    assert checkpoints.get("c1", "docs.jsonl") is None and checkpoints.get("c2", "docs.jsonl") == b"offset=7"
