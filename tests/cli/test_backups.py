"""`import` sends an export in requests: each its collection (and correction) lines, then a batch of documents
under the count and size bounds. The round trip between two servers is tests/clients/test_backups.py."""

from __future__ import annotations

import json

from app.cli import backups
from app.cli.backups import requests_of


def lines_of(body: bytes) -> list[dict]:
    return [json.loads(line) for line in body.splitlines()]


def test_every_request_starts_with_the_collection_and_correction_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(backups, "BATCH_DOCUMENTS", 2)
    head = [{"kind": "collection", "name": "t"}, {"kind": "correction", "artifact": "AAAA"}]
    docs = [{"kind": "document", "id": f"d{i}", "text": "x"} for i in range(5)]
    export = tmp_path / "t.jsonl"
    export.write_text("".join(json.dumps(line) + "\n" for line in [*head, *docs, {"kind": "end", "documents": 5}]))
    requests = list(requests_of(export))
    assert [count for _, count in requests] == [2, 2, 1]
    for body, _ in requests:
        assert lines_of(body)[:2] == head and all(line["kind"] == "document" for line in lines_of(body)[2:])
    assert [line["id"] for body, _ in requests for line in lines_of(body)[2:]] == [f"d{i}" for i in range(5)]


def test_a_batch_is_cut_before_the_size_bound_and_blank_lines_are_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(backups, "BATCH_BYTES", 250)
    docs = [{"kind": "document", "id": f"d{i}", "text": "word " * 20} for i in range(4)]  # ~130 bytes a line
    export = tmp_path / "t.jsonl"
    export.write_text(json.dumps({"kind": "collection"}) + "\n\n" + "".join(json.dumps(d) + "\n" for d in docs))
    assert [count for _, count in requests_of(export)] == [1, 1, 1, 1]
