"""A fit on a collection's stored documents: their raw vectors read back in one order, and its own correction kept
only if it clearly beats the general one on labelled pairs."""

from __future__ import annotations

import numpy as np
import pytest

from app.backbones.hashing import HashingBackbone
from app.core.errors import InvalidInput
from app.correction.selection import TuningPairs
from app.offline.collection_fit import fit_collection_correction, guarded_choice, stored_corpus, stored_documents
from app.offline.fit import fit_artifact
from app.services.documents import DocumentInput, document_records
from tests.conftest import CORPUS


def test_stored_texts_and_vectors_come_back_in_one_order_up_to_a_limit(store):
    backbone = HashingBackbone(dim=8)
    docs = [DocumentInput(text, f"d{i}") for i, text in enumerate(CORPUS[:30])]
    store.documents.put("c", document_records(backbone.encode, docs, lambda t: [(0, len(t))]))
    texts, vectors = stored_corpus(store, "c", 8)
    assert sorted(texts) == sorted(CORPUS[:30]) and vectors.shape == (30, 8)
    np.testing.assert_allclose(vectors, backbone.encode(texts), atol=2e-2)  # float16 as stored
    some, rows = stored_documents(store, "c", 8, limit=7)
    assert len(some) == 7 and rows.shape == (7, 8)


def test_the_collections_own_fit_is_kept_only_with_a_clear_gain():
    backbone = HashingBackbone(dim=8)
    own = fit_artifact(backbone, CORPUS, "whitening", {"alpha": 1.0}, progress=False)
    left, right = backbone.encode(CORPUS[:60]), backbone.encode(CORPUS[60:120])
    noise = TuningPairs(left, right, np.random.default_rng(0).uniform(0, 5, 60), "noise", (CORPUS[:60], CORPUS[60:120]))
    chosen, record = guarded_choice(backbone, own, None, noise)  # gold unrelated to the texts: no fit can win
    assert chosen is None and record["general"] is None and record["tuned_on"] == "noise"
    assert record["gain_lower_bound"] < 1.0


def test_auto_without_labelled_pairs_keeps_the_general_correction_and_says_so(store):
    said: list[str] = []
    kept = fit_collection_correction(store, "c", HashingBackbone(dim=8), "auto", {}, None, None, [], said.append)
    assert kept is None and said == ["without labelled pairs `auto` keeps the general correction"]


def test_a_collection_without_documents_has_nothing_to_fit_on(store):
    with pytest.raises(InvalidInput, match="no documents"):
        fit_collection_correction(store, "empty", HashingBackbone(dim=8), "whitening", {}, None, None, [], print)


def test_an_explicit_method_fits_on_the_stored_vectors(store):
    backbone = HashingBackbone(dim=8)
    docs = [DocumentInput(text, f"d{i}") for i, text in enumerate(CORPUS[:40])]
    store.documents.put("c", document_records(backbone.encode, docs, lambda t: [(0, len(t))]))
    fitted = fit_collection_correction(store, "c", backbone, "whitening", {"alpha": 0.5}, None, None, [], print)
    assert fitted is not None and fitted.method == "whitening" and fitted.corpus.size == 40
