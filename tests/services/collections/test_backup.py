"""A collection to lines and back, at the service: vectors kept when the backbone is the same, texts encoded again
when it is not, and documents stored alike skipped."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest

from app.core.errors import Conflict, InvalidInput
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


def _source(services, n: int = 3) -> list[dict]:
    services.collections.create("src", wait=None)
    with services.collections.get("src").using() as src:
        src.documents.add([DocumentInput(f"a dog runs, number {i}", f"d{i}", {"i": i}) for i in range(n)])
    return exported(services, "src")


def _nothing_of(services, name: str) -> None:
    assert name not in services.collections.names()
    # this test's keys only: the session's Redis holds other tests' collections named alike
    own = f"{services.settings.key_prefix}:*collection:{name}:*"
    assert list(services.store.client.scan_iter(match=own)) == []


def _with_vector(document: dict, values: np.ndarray) -> dict:
    return {**document, "dtype": "float32", "vectors": base64.b64encode(values.astype("<f4").tobytes()).decode()}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda docs, dim: [*docs, docs[0]], "line 5: document '{first}' again (first on line 2)"),
        (lambda docs, dim: [_with_vector(docs[0], np.full(dim, np.nan)), *docs[1:]], "NaN or infinite"),
        (lambda docs, dim: [_with_vector(docs[0], np.full(dim, np.inf)), *docs[1:]], "NaN or infinite"),
        (lambda docs, dim: [_with_vector(docs[0], np.zeros(dim)), *docs[1:]], "a vector of zeros"),
        (lambda docs, dim: [{**docs[0], "text": "x" * 20_001}, *docs[1:]], "at most 20,000 (CE_MAX_TEXT_CHARS"),
        (lambda docs, dim: [{**docs[0], "vectors": "AAAA"}, *docs[1:]], "for 1 passages"),
    ],
)
def test_an_import_that_breaks_a_rule_is_refused_with_nothing_written(services, change, reason):
    lines = _source(services)
    head, docs, end = lines[:1], [line for line in lines if line["kind"] == "document"], lines[-1]
    assert len(docs) == 3 and len(lines) == 5  # the weight-free backbone serves no correction
    changed = change(docs, lines[0]["dim"])
    with pytest.raises(InvalidInput, match=re.escape(reason.format(first=docs[0]["id"]))):
        import_lines(services.collections, "copy", [*head, *changed, {**end, "documents": len(changed)}])
    _nothing_of(services, "copy")


def test_the_end_line_must_count_the_documents_sent(services):
    *rest, end = _source(services)
    with pytest.raises(InvalidInput, match="the end line counts 4 documents; the import holds 3"):
        import_lines(services.collections, "copy", [*rest, {**end, "documents": 4}])
    _nothing_of(services, "copy")
    assert import_lines(services.collections, "copy", rest).from_vectors == 3  # no end line: a part of an export


def test_an_import_stating_other_settings_than_the_existing_collection_is_a_conflict(services):
    lines = _source(services)
    import_lines(services.collections, "copy", lines)
    other = {**lines[0], "index_factory": "HNSW32", "lexical_weight": 0.9}
    with pytest.raises(Conflict, match=r"index_factory 'HNSW32' \(it has 'auto'\); lexical_weight 0.9 \(it has None\)"):
        import_lines(services.collections, "copy", [other, *lines[1:]])
    assert import_lines(services.collections, "copy", lines).skipped == 3  # as stated: resumed
