"""The local dense source: documents by their best passage in the index's space, with the stored vectors' reader
for re-scoring, feedback and the scale of cosines."""

from __future__ import annotations

import numpy as np

from app.backbones.hashing import HashingBackbone
from app.correction import Correction
from app.index.dense_lists import LocalDense
from app.index.document_vectors import DocumentVectors
from app.index.faiss_index import VectorIndex
from app.index.filters import FieldIndex
from app.index.search_index import SearchIndex
from tests.index.test_document_vectors import stored_docs

BACKBONE = HashingBackbone(dim=8)


def test_in_a_corrections_space_and_through_the_local_dense_source(store, artifact_factory):
    records = stored_docs(store)
    raw = BACKBONE.encode([f"word {i} and more" for i in range(40)])
    correction = Correction(artifact_factory(raw, fingerprint=BACKBONE.fingerprint))
    vectors = DocumentVectors(store, "c", 8)
    keys, mapped = vectors.passage_vectors(records, correction)
    np.testing.assert_allclose(mapped, correction.search.apply(vectors.passages(records)[2]), atol=1e-5)
    dense = VectorIndex(correction.search.dim, "Flat", correction_id=correction.id)
    dense.upsert(keys, mapped)
    index = SearchIndex(correction, dense, FieldIndex(), passages={"two": 2})
    found = LocalDense(vectors).search(index, mapped[2:3], 2)
    assert [d for d, _ in found.hits][0] == "one" and found.missing == [] and found.stored is not None
