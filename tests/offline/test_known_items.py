"""Known-item queries: each identifier is in exactly its one document, decoys share its shape, rare words are rare."""

import re

import pytest

from app.offline.known_items import IDENTIFIER, RARE, from_texts, known_items, write_beir
from app.offline.retrieval import read_judged_corpus

TEXTS = [
    f"document number {i} talks about {w} and other matters"
    for i, w in enumerate(["apples", "bridges", "candles", "dolphins", "engines", "forests", "gardens", "harbors"] * 30)
]
UNIQUE = ["a lonely zeppelin drifted by", "the quixotic notion remained"]


def test_each_identifier_is_in_its_document_only_and_decoys_share_the_shapes():
    built = known_items(from_texts(TEXTS + UNIQUE), identifiers=40, rare=2, seed=3)
    idents = [(q, t) for q, t in zip(built.query_ids, built.query_texts, strict=True) if q.startswith(IDENTIFIER)]
    assert len(idents) == 40
    for query_id, ident in idents:
        holders = [d for d, text in zip(built.doc_ids, built.doc_texts, strict=True) if ident in text]
        assert holders == list(built.qrels[query_id])
    shapes = {re.sub(r"\d", "9", re.sub(r"[A-Z]", "A", t)) for _, t in idents}
    assert len(shapes) == 5  # SKU-99999, ERR999A, CVE-9999-99999, AA9999, ticket #999999
    planted = sum(bool(re.search(r"SKU-|ERR\d|CVE-|ticket #", t)) for t in built.doc_texts)
    assert planted >= 60  # the 40 targets' shapes and most decoys' (the two-letter part numbers carry no prefix)


def test_rare_words_are_found_in_a_single_document():
    built = known_items(from_texts(TEXTS + UNIQUE), identifiers=10, rare=5, seed=0)
    rare = [(q, t) for q, t in zip(built.query_ids, built.query_texts, strict=True) if q.startswith(RARE)]
    assert {t for _, t in rare} <= {"lonely", "zeppelin", "drifted", "quixotic", "notion", "remained"}
    assert len(rare) == 5
    for query_id, word in rare:
        (doc_id,) = built.qrels[query_id]
        assert [d for d, t in zip(built.doc_ids, built.doc_texts, strict=True) if word in t.lower()] == [doc_id]


def test_the_collection_round_trips_through_the_beir_layout(tmp_path):
    built = known_items(from_texts(TEXTS), identifiers=20, rare=0)
    read = read_judged_corpus(write_beir(built, tmp_path / "known"))
    assert (read.doc_ids, read.doc_texts) == (built.doc_ids, built.doc_texts)
    assert (read.query_ids, read.query_texts, read.qrels) == (built.query_ids, built.query_texts, built.qrels)


def test_too_few_documents_for_identifiers_and_decoys_is_refused():
    with pytest.raises(ValueError, match="need 200 documents"):
        known_items(from_texts(TEXTS[:50]), identifiers=100)
