"""Hybrid search's life against a real Redis: long documents as passages in both indexes, replicas that agree,
snapshots that carry the lexical index."""

from __future__ import annotations

import numpy as np
import pytest

from app.services.container import Services
from app.services.documents import DocumentInput
from app.services.search_query import SearchQuery
from tests.conftest import CORPUS
from tests.index.test_live import crash, wait_until

FILLER = " ".join(f"Sentence number {n} talks about nothing in particular." for n in range(12))  # ~96 words


@pytest.fixture
def settings(make_settings):
    """The hashing backbone reading 32 tokens: a document of more is split into passages."""
    return make_settings(backbone="hashing", follow_interval=0.05, max_texts=256, max_length=32)


def corpus() -> list[DocumentInput]:
    return [DocumentInput(text=t, id=f"c{i}") for i, t in enumerate(CORPUS)]


def test_a_match_past_the_window_is_found_and_deleting_leaves_no_passage(settings):
    service = Services.from_settings(settings)
    try:
        long = FILLER + " The zebra crossing glows at dawn."
        service.documents.add([*corpus(), DocumentInput(text=long, id="long")])
        space = service.served.current
        assert space.passages["long"] > 3 and space.documents == len(CORPUS) + 1
        for mode in ("dense", "lexical", "hybrid"):
            found = service.search.search(SearchQuery("zebra crossing glows", k=3, mode=mode))
            assert found.hits[0].id == "long" and found.ranking["mode"] == mode
            assert "zebra" in long[slice(*found.hits[0].passage)]  # the passage that matched, not the opening one
        service.documents.delete("long")
        space = service.served.current
        assert not any(key in space.dense for key in [f"long\x1f{n}" for n in range(8)] + ["long"])
        assert space.lexical.search("zebra", 5) == [] and len(space.lexical) == len(CORPUS)
        assert space.passages == {}
    finally:
        service.close()


def test_replacing_a_long_document_with_a_short_one_drops_its_extra_passages(settings):
    service = Services.from_settings(settings)
    try:
        service.documents.add([DocumentInput(text=FILLER + " Zebra.", id="x")])
        assert len(service.index) > 3
        service.documents.add([DocumentInput(text="a short text about a heron", id="x")])
        assert len(service.index) == 1 and service.served.current.passages == {}
        assert service.search.search(SearchQuery("zebra", k=1, mode="lexical")).hits == []
        assert service.search.search(SearchQuery("heron", k=1, mode="lexical")).hits[0].id == "x"
    finally:
        service.close()


def test_two_servers_on_one_redis_return_the_same_hybrid_results(settings, store):
    first = Services.from_settings(settings)
    second = Services.from_settings(settings)
    try:
        first.documents.add(corpus()[:100])
        second.documents.add([*corpus()[100:], DocumentInput(text=FILLER + " A heron waits.", id="long")])
        first.documents.add([DocumentInput(text="the cat reads about herons quietly", id="c5")])  # a replace
        second.documents.delete("c7")
        first.documents.delete("c8")
        last = store.changes.last_id(first.served.collection_key)
        wait_until(lambda: first.served.current.applied == last == second.served.current.applied)
        # BM25 counts a replaced or deleted version until its segment is merged, which tantivy does when it will:
        # once writes pause, each replica rebuilds its lexical index from Redis and the statistics agree.
        wait_until(lambda: first.served.current.lexical.dead == 0 == second.served.current.lexical.dead)
        for q in ("heron", "the cat runs at night", "a dog sings with joy", "nothing in particular"):
            a, b = (s.search.search(SearchQuery(q, k=10, mode="hybrid")).hits for s in (first, second))
            assert [(h.id, h.passage, h.score, h.rank_score, h.lexical_score) for h in a] == [
                (h.id, h.passage, h.score, h.rank_score, h.lexical_score) for h in b
            ]
        assert first.search.search(SearchQuery("heron", k=2)).hits[0].id in ("c5", "long")
        assert {"c7", "c8"}.isdisjoint(
            h.id for h in first.search.search(SearchQuery("the dog", k=20, mode="lexical")).hits
        )
    finally:
        second.close()
        first.close()


def test_a_restart_opens_the_lexical_index_from_the_snapshot_and_replays_the_rest(settings):
    service = Services.from_settings(settings)
    service.documents.add(corpus()[:50])
    service.served.snapshot()
    service.documents.add([DocumentInput(text=FILLER + " A heron waits.", id="late")])  # after it: the log
    service.documents.delete("c1")
    crash(service)

    again = Services.from_settings(settings)
    try:
        assert again.served.opened["from"] == "snapshot"
        space = again.served.current
        assert len(space.lexical) == space.documents == 50 and "late" in space.passages
        assert again.search.search(SearchQuery("heron", k=1, mode="lexical")).hits[0].id == "late"
        assert "c1" not in {h.id for h in again.search.search(SearchQuery("the cat", k=50, mode="lexical")).hits}
    finally:
        again.close()


def test_filters_k_and_threshold_hold_in_every_mode(settings):
    service = Services.from_settings(settings)
    try:
        docs = [DocumentInput(text=t, id=f"c{i}", metadata={"even": i % 2 == 0}) for i, t in enumerate(CORPUS)]
        service.documents.add(docs)
        for mode in ("dense", "lexical", "hybrid"):
            hits = service.search.search(SearchQuery("the cat runs", k=4, filter={"even": True}, mode=mode)).hits
            assert len(hits) == 4 and all(h.metadata == {"even": True} for h in hits)
            hits = service.search.search(SearchQuery("the cat runs", k=20, score_threshold=0.5, mode=mode)).hits
            assert hits and all(h.score >= 0.5 for h in hits)
    finally:
        service.close()


def test_a_collection_fit_reads_one_vector_per_document_however_many_passages(settings):
    from app.offline.collection_fit import stored_documents

    service = Services.from_settings(settings)
    try:
        service.documents.add([*corpus()[:5], DocumentInput(text=FILLER, id="long")])
        docs, raw = stored_documents(service.store, service.served.collection_key, service.backbone.dim)
        assert len(docs) == len(raw) == 6
        first = {d.id: row for d, row in zip(docs, raw, strict=True)}["long"]
        start, end = service.documents.split(FILLER)[0]  # its first passage, not the whole text
        assert end < len(FILLER)
        as_stored = service.backbone.encode([FILLER[start:end]])[0].astype(np.float16).astype(np.float32)
        np.testing.assert_allclose(first, as_stored, rtol=1e-5, atol=1e-6)
    finally:
        service.close()


@pytest.mark.process
def test_a_working_folder_left_by_a_killed_process_is_removed_and_a_live_ones_kept(tmp_path, monkeypatch):
    import subprocess
    import sys

    from app.index import lexical
    from app.index.lexical import Analyzer, LexicalIndex, remove_abandoned

    monkeypatch.setattr(lexical, "ABANDON_AFTER", 0.0)
    mine = LexicalIndex(tmp_path / "mine", Analyzer())
    code = (
        f"from app.index.lexical import *; LexicalIndex({str(tmp_path / 'dead')!r}, Analyzer()); import os; os._exit(9)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 9  # killed: no close()
    assert (tmp_path / "dead").is_dir()
    remove_abandoned(tmp_path)
    assert not (tmp_path / "dead").exists() and (tmp_path / "mine").is_dir()
    mine.close()
    assert not (tmp_path / "mine").exists()
