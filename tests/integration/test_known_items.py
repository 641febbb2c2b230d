"""Known-item search with the real model, as the service ranks by default: an identifier typed verbatim comes back
first, and a word found in one document does as well as lexical search alone finds it."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from app.core.config import Settings
from app.offline.datasets import read_corpus
from app.offline.known_items import IDENTIFIER, RARE, from_texts, known_items
from app.offline.served_search import add_collection, served_services
from app.services.search_query import SearchQuery
from tests.conftest import STS, with_graphs


@pytest.mark.model
def test_identifiers_come_first_and_rare_words_as_often_as_lexical_search_finds_them(tmp_path, onnx_graphs):
    base = from_texts(read_corpus(STS / "sts-train.csv"))
    built = known_items(replace(base, doc_ids=base.doc_ids[:2000], doc_texts=base.doc_texts[:2000]))
    shapes = {
        re.sub(r"\d", "9", re.sub(r"[A-Z]", "A", t))
        for q, t in zip(built.query_ids, built.query_texts, strict=True)
        if q.startswith(IDENTIFIER)
    }
    assert len(shapes) >= 4 and len(built.doc_ids) == 2000
    settings = Settings(data_dir=with_graphs(onnx_graphs, tmp_path / "data"))  # the default backbone and correction
    services = served_services(settings, tmp_path / "run")
    try:
        add_collection(services, built, progress=False)
        first = {IDENTIFIER: {"served": 0, "lexical": 0}, RARE: {"served": 0, "lexical": 0}}
        for query_id, text in zip(built.query_ids, built.query_texts, strict=True):
            for mode in ("served", "lexical"):
                found = services.search.search(SearchQuery(text, 1, mode=None if mode == "served" else mode))
                first[query_id.split("-")[0]][mode] += bool(found.hits) and found.hits[0].id in built.qrels[query_id]
        assert found.ranking["fusion"] is None  # the last search was lexical; the served one is the default:
        assert services.search.search(SearchQuery("x", 1)).ranking["chosen_by"].startswith("no judgments")
    finally:
        services.close()
    print(f"\nfirst of 100: {first}")
    assert first[IDENTIFIER]["served"] >= 97
    assert first[RARE]["served"] >= first[RARE]["lexical"]
