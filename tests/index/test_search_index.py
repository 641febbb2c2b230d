"""A collection's search index: documents by their best passage, searched deeper until enough distinct ones are
found; passage keys of documents; the space it describes."""

from __future__ import annotations

import numpy as np

from app.index.faiss_index import VectorIndex
from app.index.filters import FieldIndex
from app.index.passages import passage_key
from app.index.search_index import SearchIndex, dense_hits


def index_of(rows: dict[str, list[float]], passages: dict[str, int]) -> SearchIndex:
    dense = VectorIndex(2, "Flat")
    keys = list(rows)
    vectors = np.array([rows[k] for k in keys], dtype=np.float32)
    dense.upsert(keys, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    return SearchIndex(None, dense, FieldIndex(), passages=passages)


def test_documents_come_by_their_best_passage_and_the_search_goes_deeper_for_enough_of_them():
    rows = {
        "long": [1.0, 0.0],
        passage_key("long", 1): [0.99, 0.1],
        passage_key("long", 2): [0.98, 0.2],
        passage_key("long", 3): [0.97, 0.25],
        "short": [0.0, 1.0],
    }
    index = index_of(rows, {"long": 4})
    docs, best = dense_hits(index, np.array([[1.0, 0.0]], dtype=np.float32), 2, None)
    assert [d for d, _ in docs] == ["long", "short"] and best == {"long": 0, "short": 0}  # past long's 4 passages
    query = np.array([[0.96, 0.28]], dtype=np.float32) / np.linalg.norm([0.96, 0.28])
    (top,), best = dense_hits(index, query, 1, None)
    assert top[0] == "long" and best["long"] == 3
    assert index.keys_of(["long", "short"]) == ["long", *(passage_key("long", n) for n in (1, 2, 3)), "short"]
    assert index.documents == 2


def test_a_filter_searches_only_the_allowed_documents_passages():
    index = index_of({"a": [1.0, 0.0], passage_key("a", 1): [0.9, 0.1], "b": [0.8, 0.6]}, {"a": 2})
    docs, _ = dense_hits(index, np.array([[1.0, 0.0]], dtype=np.float32), 5, {"b"})
    assert [d for d, _ in docs] == ["b"]
    assert index.describe_search() == {
        "shared_with_similarity": True,
        "method": "none",
        "params": {},
        "correction": None,
        "dim": 2,
    }
