"""Stored documents to vectors: every passage keyed and decoded, mapped into a correction's space, and read back
by key for re-scoring (a row of NaN for a document no longer stored)."""

from __future__ import annotations

import numpy as np

from app.backbones.hashing import HashingBackbone
from app.correction.pipeline import l2_normalize
from app.index.document_vectors import DocumentVectors
from app.index.passages import passage_key
from app.services.documents import DocumentInput, document_records

BACKBONE = HashingBackbone(dim=8)


def stored_docs(store) -> list:
    def two(text):
        return [(0, 3), (4, len(text))]

    docs = [DocumentInput("cat naps all day", "two"), DocumentInput("a dog", "one")]
    records = document_records(BACKBONE.encode, docs[:1], two) + document_records(
        BACKBONE.encode, docs[1:], lambda t: [(0, len(t))]
    )
    store.documents.put("c", records)
    return records


def test_passages_are_keyed_and_decoded_and_read_back_by_key(store):
    records = stored_docs(store)
    vectors = DocumentVectors(store, "c", 8)
    keys, texts, raw = vectors.passages(records)
    assert keys == ["two", passage_key("two", 1), "one"] and texts == ["cat", "naps all day", "a dog"]
    np.testing.assert_allclose(raw, BACKBONE.encode(texts), atol=2e-2)  # float16 as stored
    read = vectors.exact_vectors(None, 8)([passage_key("two", 1), "gone", "one"])
    np.testing.assert_allclose(read[[0, 2]], l2_normalize(raw[[1, 2]]), atol=1e-6)  # uncorrected: unit rows
    assert np.isnan(read[1]).all()
    np.testing.assert_allclose(vectors.first_vectors(records), raw[[0, 2]])
    assert vectors.indexed(records, None)[0] == keys
    assert DocumentVectors(store, "c", 8, keys_only=True).indexed(records, None) == (keys, None)
