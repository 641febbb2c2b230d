"""Documents to stored records: ids given or the text's hash, a repeated id's last version, every passage's raw
vector in float16, and ids the index could not tell apart refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.backbones.hashing import HashingBackbone
from app.core.errors import InvalidInput
from app.core.stored_vectors import from_stored
from app.services.documents import DocumentInput, document_id, document_records

BACKBONE = HashingBackbone(dim=8)


def whole(text: str) -> list[tuple[int, int]]:
    return [(0, len(text))]


def halves(text: str) -> list[tuple[int, int]]:
    middle = text.index(" ", len(text) // 2)
    return [(0, middle), (middle + 1, len(text))]


def test_ids_default_to_the_texts_hash_and_a_repeated_id_keeps_its_last_version():
    docs = [DocumentInput("a cat sleeps"), DocumentInput("first", "x", {"v": 1}), DocumentInput("second", "x")]
    first, last = document_records(BACKBONE.encode, docs, whole)
    assert first.id == document_id("a cat sleeps") == document_records(BACKBONE.encode, docs[:1], whole)[0].id
    assert (last.id, last.text, json.loads(last.metadata_json)) == ("x", "second", {})
    np.testing.assert_allclose(
        from_stored([first.vector], [first.vector_dtype], 8), BACKBONE.encode(["a cat sleeps"]), atol=2e-2
    )  # float16 as stored


def test_a_long_document_keeps_a_vector_per_passage_and_its_spans():
    text = "the cat sleeps in the sun all day long"
    (record,) = document_records(BACKBONE.encode, [DocumentInput(text, "long")], halves)
    rows = from_stored([record.vector], [record.vector_dtype], 8)
    spans = json.loads(record.passages)
    assert rows.shape == (2, 8) and [text[s:e] for s, e in spans] == ["the cat sleeps in the", "sun all day long"]


@pytest.mark.parametrize("bad", ["", "x" * 257, "a\x1fb"])
def test_ids_that_cannot_be_indexed_are_refused_with_their_position(bad):
    with pytest.raises(InvalidInput, match=r"documents\[1\]\.id"):
        document_records(BACKBONE.encode, [DocumentInput("fine"), DocumentInput("text", bad)], whole)


def test_a_stored_record_no_index_can_hold_is_left_out_and_named_and_the_collection_opens(make_settings, caplog):
    from dataclasses import replace as changed

    from app.services.container import Services
    from app.services.search_query import SearchQuery

    settings = make_settings(backbone="hashing", follow_interval=0.05)
    first = Services.from_settings(settings)
    try:
        first.documents.add([DocumentInput("a heron by the river", "good"), DocumentInput("a stone", "bad")])
        (record,) = first.store.documents.get(first.served.collection_key, ["bad"])
        spoiled = changed(record, passages="[[0, 3], [9, 2]]")  # as an older import could store it
        first.store.documents.put(first.served.collection_key, [spoiled])
    finally:
        first.close()
    again = Services.from_settings(settings)  # a new start reads the store: it opens, without the bad record
    try:
        assert [h.id for h in again.search.search(SearchQuery("heron stone", k=5)).hits] == ["good"]
        assert "document 'bad'" in caplog.text and "passages" in caplog.text
        assert not again.served.verify().drift  # left out by rule, not drift: no rebuild at each check
    finally:
        again.close()
