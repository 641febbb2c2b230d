"""A collection to lines and back, at the service: vectors kept when the backbone is the same, texts encoded again
when it is not, and documents stored alike skipped."""

from __future__ import annotations

import json

import pytest

from app.core.errors import InvalidInput
from app.services.collections.backup import export_lines, import_lines
from app.services.container import Services
from app.services.documents import DocumentInput


@pytest.fixture
def services(make_settings):
    services = Services.from_settings(make_settings(backbone="hashing"))
    yield services
    services.close()


def exported(services, name: str) -> list[dict]:
    collection = services.collections.get(name)
    return [json.loads(line) for line in export_lines(collection)]


def test_another_backbone_encodes_the_texts_again_and_the_same_one_keeps_the_vectors(services):
    services.collections.create("src", wait=None)
    with services.collections.get("src").using() as src:
        src.documents.add([DocumentInput(f"a cat sleeps, number {i}", f"d{i}", {"i": i}) for i in range(6)])
    lines = exported(services, "src")
    first = next(i for i, line in enumerate(lines) if line["kind"] == "document")
    assert lines[0]["fingerprint"] == services.backbone.fingerprint and lines[-1] == {"kind": "end", "documents": 6}
    same = import_lines(services.collections, "same", lines)
    assert (same.created, same.from_vectors, same.encoded) == (True, 6, 0)
    other = [{**lines[0], "fingerprint": "another-backbone"}, *lines[1:]]
    moved = import_lines(services.collections, "moved", other)
    assert (moved.from_vectors, moved.encoded) == (0, 6)
    assert exported(services, "moved")[first:-1] == exported(services, "same")[first:-1]  # hashing: alike
    changed = [*lines[:first], {**lines[first], "text": "changed"}, *lines[first + 1 :]]
    again = import_lines(services.collections, "same", changed)
    assert (again.skipped, again.from_vectors) == (5, 1)


def test_vectors_that_do_not_fit_their_passages_are_refused(services):
    services.collections.create("src", wait=None)
    with services.collections.get("src").using() as src:
        src.documents.add([DocumentInput("a dog runs", "d0")])
    *head, document, end = exported(services, "src")
    with pytest.raises(InvalidInput, match="d0"):
        import_lines(services.collections, "bad", [*head, {**document, "vectors": "AAAA"}, end])
