"""One document across HTTP, LangChain and LlamaIndex on a real server and the real model: each store reads what the
others wrote, whole; k past the server's page comes back page by page, every document once; relevance scores in
[0, 1] in the results' order; an embeddings object of another space is refused when the store is built."""

from __future__ import annotations

import pytest
from llama_index.core import Settings
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

from corrected_embeddings_client import Client, Document
from corrected_embeddings_client.langchain import CorrectedEmbeddings, CorrectedVectorStore
from corrected_embeddings_client.llamaindex import CorrectedVectorStore as LlamaStore
from tests.clients.conftest import API_KEY

LONG = " ".join(
    f"Paragraph {n} of the maintenance log says the boiler was checked and found in order." for n in range(60)
)


@pytest.fixture
def stores(server_url, collection):
    Settings.tokenizer = str.split  # LlamaIndex's default tokenizer downloads its vocabulary; nothing is fetched here
    with (
        Client(server_url, API_KEY, collection=collection) as http,
        CorrectedVectorStore(server_url, API_KEY, collection=collection) as chain,
    ):
        yield http, chain, LlamaStore(server_url, API_KEY, collection=collection)


def test_each_store_finds_whole_what_the_others_wrote(stores):
    http, chain, llama = stores
    http.add_documents([Document(LONG + " The heron nests on the roof.", "by-http", {"via": "http"})])
    chain.add_texts(["a heron fishes in the harbour at dawn"], [{"via": "langchain"}], ids=["by-langchain"])
    llama.add([TextNode(id_="by-llamaindex", text="a heron flies over the harbour", metadata={"via": "llamaindex"})])
    query = "heron harbour roof"
    by_chain = {d.id: d for d in chain.similarity_search(query, k=3)}
    found = llama.query(VectorStoreQuery(query_str=query, similarity_top_k=3))
    by_llama = {n.node_id: n for n in found.nodes}
    by_http = {h.id: h for h in http.search(query, 3).hits}
    assert set(by_chain) == set(by_llama) == set(by_http) == {"by-http", "by-langchain", "by-llamaindex"}
    for doc_id, hit in by_http.items():
        assert by_chain[doc_id].page_content == hit.text == by_llama[doc_id].get_content()  # whole, everywhere
    assert by_chain["by-http"].page_content.startswith("Paragraph 0") and len(by_http["by-http"].text) > 5000
    assert by_llama["by-http"].metadata["via"] == "http" and by_chain["by-llamaindex"].metadata["via"] == "llamaindex"


def test_a_k_past_the_servers_page_returns_every_document_once_with_relevance_in_order(stores):
    http, chain, llama = stores
    http.add_documents(
        [Document(f"note {n}: the {['red', 'blue', 'green'][n % 3]} team met on day {n}", f"n{n}") for n in range(2000)]
    )
    wide = chain.similarity_search("the blue team met", k=1500)  # past the server's CE_MAX_K of 1,000: two pages
    assert len(wide) == 1500 and len({d.id for d in wide}) == 1500
    top = llama.query(VectorStoreQuery(query_str="the blue team met", similarity_top_k=1000))
    assert len(set(top.ids)) == 1000 and top.ids == [d.id for d in wide[:1000]]
    for mode in ("hybrid", "dense", "lexical"):
        scored = chain.similarity_search_with_relevance_scores("the green team", k=50, mode=mode)
        scores = [s for _, s in scored]
        assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores), mode
    nodes = llama.query(VectorStoreQuery(query_str="day 7", similarity_top_k=30, mode=VectorStoreQueryMode.HYBRID))
    assert nodes.similarities == sorted(nodes.similarities, reverse=True) and nodes.similarities[0] <= 1.0


def test_an_embeddings_object_of_another_space_is_refused_when_the_store_is_built(server_url):
    with pytest.raises(ValueError, match="space='search'"):
        CorrectedVectorStore(server_url, API_KEY, embedding=CorrectedEmbeddings(server_url, API_KEY))
    searching = CorrectedEmbeddings(server_url, API_KEY, space="search")
    assert CorrectedVectorStore(server_url, API_KEY, embedding=searching).embeddings is searching


def test_llamaindex_needs_no_embedding_model_the_server_encodes_once(stores):
    from llama_index.core import MockEmbedding, StorageContext, VectorStoreIndex

    _, _, llama = stores
    nodes = [TextNode(id_="m1", text="the boiler room floods"), TextNode(id_="m2", text="a quiet library")]
    index = VectorStoreIndex(  # MockEmbedding: LlamaIndex's node vectors, which the store leaves unread, cost nothing
        nodes, storage_context=StorageContext.from_defaults(vector_store=llama), embed_model=MockEmbedding(embed_dim=1)
    )
    found = index.as_retriever(similarity_top_k=1).retrieve("water in the boiler room")
    assert [n.node.node_id for n in found] == ["m1"] and 0.0 <= found[0].score <= 1.0
