"""A hit's cosine: the dense list's when it ranked the document, else its best stored passage's, with the span."""

from __future__ import annotations

import pytest

from app.backbones.hashing import HashingBackbone
from app.index.document_vectors import DocumentVectors
from app.index.faiss_index import VectorIndex
from app.index.filters import FieldIndex
from app.index.search_index import SearchIndex
from app.services.documents import DocumentInput, document_records
from app.services.search_hits import exact_cosine

TEXT = "The heron stands in the river. A train crosses the old stone bridge at dawn."


def test_a_hit_takes_the_dense_lists_cosine_or_else_its_best_stored_passage(store):
    backbone = HashingBackbone(dim=16)
    (record,) = document_records(backbone.encode, [DocumentInput(TEXT, "d")], lambda t: [(0, 30), (31, len(t))])
    vectors = DocumentVectors(store, "c", 16)
    index = SearchIndex(None, VectorIndex(16), FieldIndex())
    _, rows = vectors.passage_vectors([record], None)
    query = rows[1]  # the second passage itself: it is the best
    cosine, n, span = exact_cosine(vectors, index, record, query, {}, {})
    assert (n, span) == (1, (31, len(TEXT))) and cosine == pytest.approx(1.0, abs=1e-3)
    assert cosine > float(rows[0] @ query)
    listed = exact_cosine(vectors, index, record, query, {"d": 0.25}, {"d": 0})
    assert listed == (0.25, 0, (0, 30))  # the dense list's own figure and passage, not recomputed
