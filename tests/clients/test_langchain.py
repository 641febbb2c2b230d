"""The LangChain store's contract beyond the standard suites, against a real server and the real model: MMR, the
by-vector methods, filter operators, scores in the results' order, one id per document, duplicate ids refused,
from_documents into a new collection, a store reused across event loops, many ids in one request."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from langchain_core.documents import Document as LangChainDocument

from corrected_embeddings_client import Client, Unavailable
from corrected_embeddings_client.langchain import CorrectedVectorStore
from tests.clients.conftest import API_KEY

HERONS = ["a grey heron waits by the river"] * 3 + ["a heron stands in the reeds", "the printer on floor 3 is jammed"]


@pytest.fixture
def store(server_url, collection):
    with CorrectedVectorStore(server_url, API_KEY, collection=collection) as s:
        yield s


def test_mmr_gives_diverse_results_in_every_form(store):
    ids = store.add_texts(HERONS, metadatas=[{"n": i} for i in range(5)])
    query = "grey heron by the river"
    plain = [d.id for d in store.similarity_search(query, k=3, mode="dense")]
    assert set(plain) == set(ids[:3])  # the three copies come first
    retriever = store.as_retriever(search_type="mmr", search_kwargs={"k": 2, "fetch_k": 5, "lambda_mult": 0.5})
    vector = store.embeddings.embed_query(query)
    for found in (
        store.max_marginal_relevance_search(query, k=2, fetch_k=5, lambda_mult=0.5),
        retriever.invoke(query),
        store.max_marginal_relevance_search_by_vector(vector, k=2, fetch_k=5, lambda_mult=0.5),
        asyncio.run(store.amax_marginal_relevance_search(query, k=2, fetch_k=5, lambda_mult=0.5)),
    ):
        assert found[0].page_content == HERONS[0] and found[1].page_content != HERONS[0]  # not a second copy
    kept = store.max_marginal_relevance_search(query, k=3, fetch_k=5, lambda_mult=1.0)
    assert {d.id for d in kept} == set(plain)  # lambda 1: relevance alone


def test_search_by_vector_finds_the_document_of_the_text(store):
    ids = store.add_texts(HERONS[2:], ids=["h", "r", "p"])
    vector = store.embeddings.embed_query(HERONS[4])
    assert [d.id for d in store.similarity_search_by_vector(vector, k=1)] == ["p"] and ids == ["h", "r", "p"]
    (doc, cosine), *_ = store.similarity_search_with_score_by_vector(vector, k=2)
    assert doc.id == "p" and cosine > 0.999
    assert asyncio.run(store.asimilarity_search_by_vector(vector, k=1))[0].id == "p"


def test_filters_with_operators_and_scores_in_the_results_order(store):
    years = [2018, 2019, 2020, 2021, 2022]
    store.add_texts(
        [f"release notes of {y}: faster search" for y in years], [{"year": y, "tags": ["notes"]} for y in years]
    )
    recent = store.similarity_search("release notes", k=5, filter={"year": {"$gte": 2020}, "tags": "notes"})
    assert sorted(d.metadata["year"] for d in recent) == [2020, 2021, 2022]
    scored = store.similarity_search_with_score("release notes faster search", k=5)  # hybrid: the fused score
    scores = [s for _, s in scored]
    assert scores == sorted(scores, reverse=True) and all("cosine" in d.metadata["_search"] for d, _ in scored)
    store.delete(filter={"year": {"$lt": 2020}})
    assert len(store.similarity_search("release notes", k=5)) == 3


def test_one_document_per_text_and_duplicate_ids_refused(store):
    ids = store.add_texts(["the same text", "the same text"])
    assert len(set(ids)) == 2 and len(store.get_by_ids(ids)) == 2
    with pytest.raises(ValueError, match="duplicate ids in one call: 'a'"):
        store.add_texts(["one", "two"], ids=["a", "a"])


def test_from_documents_creates_a_missing_collection_without_an_embedding(server_url, client):
    name = f"new-{uuid.uuid4().hex[:8]}"
    docs = [LangChainDocument(page_content="a heron by the river", metadata={"k": 1}, id="h")]
    try:
        with CorrectedVectorStore.from_documents(docs, base_url=server_url, api_key=API_KEY, collection=name) as made:
            assert made.get_by_ids(["h"])[0].metadata == {"k": 1}
    finally:
        client.delete_collection(name)


def test_a_store_serves_every_event_loop_a_program_runs(store):
    store.add_texts(HERONS[3:], ids=["r", "p"])
    for _ in range(3):  # each asyncio.run() is a new loop
        assert asyncio.run(store.asimilarity_search("printer jammed", k=1))[0].id == "p"


def test_many_ids_in_one_request_a_str_is_one_text_and_the_key_from_the_environment(
    server_url, collection, monkeypatch
):
    sent = []
    http = httpx.Client(
        base_url=server_url, headers={"Authorization": f"Bearer {API_KEY}"}, event_hooks={"request": [sent.append]}
    )
    with Client(server_url, API_KEY, collection=collection, http=http) as c:
        c.add_documents([{"id": f"d{i}", "text": f"note {i}"} for i in range(40)])
        sent.clear()
        assert len(c.get_documents([f"d{i}" for i in range(40)] + ["nope"])) == 40 and len(sent) == 1
        assert c.delete_documents([f"d{i}" for i in range(30)]) == 30 and len(sent) == 2
        assert len(c.embed("abc")) == 1
        assert c.update_metadata({"d35": {"k": 1}}, merge=True) == ["d35"] and c.get_document("d35").metadata == {
            "k": 1
        }
    monkeypatch.setenv("CE_API_KEY", API_KEY)
    with Client(server_url, collection=collection) as keyed:
        assert keyed.count_documents() == 10 and [d.id for d in keyed.list_documents(page=3)][:2] == ["d30", "d31"]


def test_a_server_that_does_not_answer_is_retried_then_named():
    with Client("http://127.0.0.1:9", max_retries=1) as c, pytest.raises(Unavailable, match="unreachable"):
        c.embed("abc")
