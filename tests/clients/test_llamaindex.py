"""The LlamaIndex store and embedding against a real server and the real model, through LlamaIndex's own index,
retriever and query engine: filters mapped from its MetadataFilters, MMR, hybrid, deleting a source document, async."""

from __future__ import annotations

import asyncio

import pytest
from llama_index.core import Settings, StorageContext, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import FilterCondition, FilterOperator, MetadataFilter, MetadataFilters

from corrected_embeddings_client.llamaindex import CorrectedEmbedding, CorrectedVectorStore, to_filter
from tests.clients.conftest import API_KEY

TEXTS = {
    "n1": ("the printer on floor 3 is jammed", {"floor": 3, "tags": ["it", "urgent"]}, "ticket-1"),
    "n2": ("paper is stuck in the printer", {"floor": 2, "tags": ["it"]}, "ticket-1"),
    "n3": ("the coffee machine is empty", {"floor": 3, "tags": ["kitchen"]}, "ticket-2"),
    "n4": ("the coffee machine is empty again", {"floor": 4}, "ticket-3"),
}


@pytest.fixture
def index(server_url, collection):
    Settings.tokenizer = str.split  # LlamaIndex's default tokenizer downloads its vocabulary; nothing is fetched here
    store = CorrectedVectorStore(server_url, API_KEY, collection=collection)
    nodes = [
        TextNode(
            id_=node_id,
            text=text,
            metadata=metadata,
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=source)},
        )
        for node_id, (text, metadata, source) in TEXTS.items()
    ]
    embed = CorrectedEmbedding(server_url, API_KEY, collection=collection, space="search")
    return VectorStoreIndex(nodes, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=embed)


def ids(nodes) -> list[str]:
    return [n.node.node_id for n in nodes]


def test_the_retriever_filters_ranks_and_diversifies_on_the_server(index):
    floor3 = MetadataFilters(filters=[MetadataFilter(key="floor", value=3)])
    assert ids(index.as_retriever(similarity_top_k=2, filters=floor3).retrieve("printer jammed")) == ["n1", "n3"]
    upstairs = MetadataFilters(filters=[MetadataFilter(key="floor", value=3, operator=FilterOperator.GTE)])
    found = index.as_retriever(similarity_top_k=4, filters=upstairs).retrieve("coffee machine")
    assert set(ids(found)) == {"n1", "n3", "n4"} and found[0].node.get_content() in (TEXTS["n3"][0], TEXTS["n4"][0])
    urgent = MetadataFilters(filters=[MetadataFilter(key="tags", value="urgent", operator=FilterOperator.CONTAINS)])
    assert ids(index.as_retriever(similarity_top_k=4, filters=urgent).retrieve("printer")) == ["n1"]
    mmr = index.as_retriever(
        similarity_top_k=2, vector_store_query_mode="mmr", vector_store_kwargs={"mmr_threshold": 0.5}
    )
    assert set(ids(mmr.retrieve("the coffee machine is empty"))) != {"n3", "n4"}  # not both near-copies
    hybrid = index.as_retriever(similarity_top_k=1, vector_store_query_mode="hybrid", alpha=0.2)
    assert ids(hybrid.retrieve("paper stuck")) == ["n2"]
    assert ids(asyncio.run(index.as_retriever(similarity_top_k=1).aretrieve("paper stuck in printer"))) == ["n2"]


def test_the_query_engine_answers_from_the_nodes_and_a_deleted_source_leaves(index):
    answer = index.as_query_engine(llm=MockLLM(), similarity_top_k=2).query("what is wrong with the printer?")
    assert set(ids(answer.source_nodes)) == {"n1", "n2"}
    index.delete_ref_doc("ticket-1")
    assert set(ids(index.as_retriever(similarity_top_k=4).retrieve("printer"))) == {"n3", "n4"}
    assert [n.node_id for n in index.vector_store.get_nodes(["n3", "n1"])] == ["n3"]


def test_llamaindex_filters_map_to_the_services_operators():
    nested = MetadataFilters(
        filters=[
            MetadataFilter(key="floor", value=[2, 3], operator=FilterOperator.IN),
            MetadataFilters(
                filters=[MetadataFilter(key="tags", value=["it", "urgent"], operator=FilterOperator.ALL)],
                condition=FilterCondition.NOT,
            ),
        ],
        condition=FilterCondition.OR,
    )
    assert to_filter(nested) == {
        "$or": [{"floor": {"$in": [2, 3]}}, {"$not": {"$and": [{"tags": "it"}, {"tags": "urgent"}]}}]
    }
    with pytest.raises(ValueError, match="text_match"):
        to_filter(MetadataFilter(key="t", value="x", operator=FilterOperator.TEXT_MATCH))
