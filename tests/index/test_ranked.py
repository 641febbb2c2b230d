"""Pages are slices of one ranking: over random corpora (small vocabularies, so scores tie often), filters, modes,
fusions, feedback, `like` and MMR, pages of any size concatenated equal one request for the whole depth, with no id
twice and, where a mode ranks every document, none missing."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from app.index.ranked import RankedList
from app.services.container import Services
from app.services.documents import DocumentInput
from app.services.search_query import Diversity, SearchQuery

WORDS = ["heron", "river", "stone", "night", "cat", "blue", "runs", "the"]

corpora = st.lists(
    st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), st.integers(0, 3), st.booleans()),
    min_size=5,
    max_size=70,
)


@pytest.fixture
def services(make_settings):
    service = Services.from_settings(make_settings(backbone="hashing", follow_interval=0.05, max_texts=256))
    yield service
    service.close()


def walk(search, query: SearchQuery, size: int) -> list[str]:
    """Every page of `size` in turn, until one comes back short."""
    ids: list[str] = []
    while True:
        page = search(query.__class__(**{**query.__dict__, "k": size, "offset": len(ids)})).hits
        ids += [h.id for h in page]
        if len(page) < size:
            return ids


@hypothesis_settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    corpus=corpora,
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    mode=st.sampled_from(["dense", "lexical", "hybrid"]),
    fusion=st.sampled_from(["calibrated", "convex", "rrf"]),
    candidates=st.integers(1, 30),
    size=st.integers(1, 12),
    group=st.none() | st.integers(0, 3),
    feedback=st.sampled_from([0, 2]),
    like=st.booleans(),
    mmr=st.none() | st.integers(1, 20),
)
def test_pages_concatenated_equal_one_request(
    services, corpus, query, mode, fusion, candidates, size, group, feedback, like, mmr
):
    docs = [
        DocumentInput(" ".join(words), id=f"d{i:03d}", metadata={"group": g, "flag": flag})
        for i, (words, g, flag) in enumerate(corpus)
    ]
    services.documents.delete_many([f"d{i:03d}" for i in range(70)])  # each example its own corpus
    services.documents.add(docs)
    where = None if group is None else {"group": group}
    asked = SearchQuery(
        None if like else query,
        like="d000" if like else None,
        mode=mode,
        fusion=fusion,
        candidates=candidates,
        filter=where,
        feedback_docs=feedback,
        diversity=None if mmr is None else Diversity(0.5, mmr),
    )
    whole = [h.id for h in services.search.search(SearchQuery(**{**asked.__dict__, "k": len(docs)})).hits]
    assert len(whole) == len(set(whole))
    assert walk(services.search.search, asked, size) == whole
    if mode != "lexical":  # dense and hybrid rank every document in scope
        scope = {d.id for d in docs if group is None or d.metadata["group"] == group} - ({"d000"} if like else set())
        assert set(whole) == scope


def test_the_fused_window_comes_first_then_the_source_less_the_window_at_the_tail_score():
    reads = []

    def source(depth):
        reads.append(depth)
        return [("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6), ("e", 0.5)][:depth]

    order = RankedList(source, [("a", 0.9), ("b", 0.8)], 2, head=[("c", 1.0), ("a", 0.4)], leave_out="d", tail_score=0)
    assert order.first(2) == [("c", 1.0), ("a", 0.4)] and reads == []  # the window alone: nothing read
    assert order.first(4) == [("c", 1.0), ("a", 0.4), ("b", 0), ("e", 0)] and reads == [7]
    assert order.first(9) == order.first(4)  # the source has ended: not read again
    assert RankedList(source).first(3) == [("a", 0.9), ("b", 0.8), ("c", 0.7)]  # one list: its own scores
