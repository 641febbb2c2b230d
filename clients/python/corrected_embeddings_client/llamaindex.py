"""LlamaIndex's vector store and embedding on the service: nodes stored with their text and metadata (the node itself
as LlamaIndex's own `node_to_metadata_dict` keeps it), queries ranked by the server (dense, hybrid, lexical or MMR),
its `MetadataFilters` mapped to the service's filter operators."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.schema import BaseNode, MetadataMode, TextNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict

from corrected_embeddings_client.aio import AsyncClient
from corrected_embeddings_client.client import Client
from corrected_embeddings_client.models import Document, SearchResult

NODE_CONTENT = "_node_content"  # where node_to_metadata_dict keeps a LlamaIndex node
SIMPLE = {
    FilterOperator.EQ: "$eq",
    FilterOperator.NE: "$ne",
    FilterOperator.GT: "$gt",
    FilterOperator.GTE: "$gte",
    FilterOperator.LT: "$lt",
    FilterOperator.LTE: "$lte",
    FilterOperator.IN: "$in",
    FilterOperator.NIN: "$nin",
    FilterOperator.ANY: "$in",  # a list field holding any of the values
    FilterOperator.CONTAINS: "$eq",  # a list field holding the value
}
MODES = {
    VectorStoreQueryMode.HYBRID: "hybrid",
    VectorStoreQueryMode.SEMANTIC_HYBRID: "hybrid",
    VectorStoreQueryMode.TEXT_SEARCH: "lexical",
    VectorStoreQueryMode.SPARSE: "lexical",
}


def to_filter(filters: MetadataFilters | MetadataFilter) -> dict[str, Any]:
    """LlamaIndex's filters as the service's filter language ($and, $or, $not and the comparison operators)."""
    if isinstance(filters, MetadataFilter):
        op, key, value = filters.operator, filters.key, filters.value
        if op in SIMPLE:
            return {key: {SIMPLE[op]: value}}
        if op == FilterOperator.ALL:
            return {"$and": [{key: v} for v in (value if isinstance(value, list) else [value])]}
        if op == FilterOperator.IS_EMPTY:
            return {"$or": [{key: {"$exists": False}}, {key: None}]}
        raise ValueError(f"filter operator {op.value!r} on {key!r}: not served (text matching is the query's job)")
    parts = [to_filter(f) for f in filters.filters]
    if filters.condition == FilterCondition.NOT:
        return {"$not": parts[0] if len(parts) == 1 else {"$and": parts}}
    return parts[0] if len(parts) == 1 else {"$or" if filters.condition == FilterCondition.OR else "$and": parts}


def _search_options(query: VectorStoreQuery) -> dict[str, Any]:
    """The query as POST /search takes it: text and/or vector, filters, the mode, MMR's lambda."""
    options: dict[str, Any] = {}
    clauses = [to_filter(query.filters)] if query.filters and query.filters.filters else []
    if query.doc_ids:
        clauses.append({"ref_doc_id": {"$in": list(query.doc_ids)}})
    if clauses:
        options["filter"] = clauses[0] if len(clauses) == 1 else {"$and": clauses}
    if query.query_embedding is not None:
        options["vector"] = list(query.query_embedding)
    if query.mode in MODES:
        options["mode"] = MODES[query.mode]
        if query.alpha is not None and options["mode"] == "hybrid":
            options["lexical_weight"] = 1.0 - query.alpha  # LlamaIndex's alpha: 1 is vectors alone
    elif query.mode == VectorStoreQueryMode.MMR:
        lambda_ = query.mmr_threshold if query.mmr_threshold is not None else 0.5
        options["mmr"] = {"lambda": lambda_, "fetch_k": max(4 * query.similarity_top_k, 20)}
    elif query.mode != VectorStoreQueryMode.DEFAULT:
        raise ValueError(f"query mode {query.mode.value!r} is not served: default, hybrid, text_search, sparse or mmr")
    if query.node_ids:
        raise ValueError("node_ids in a query are not served: filter on metadata, or get_nodes(node_ids)")
    return options


def _node(doc: Document) -> BaseNode:
    """The node LlamaIndex stored (its `_node_content`), else a text node of a document written another way (HTTP,
    LangChain): its whole text, its metadata, its id."""
    if NODE_CONTENT in doc.metadata:
        return metadata_dict_to_node(doc.metadata, text=doc.text)
    return TextNode(id_=doc.id or "", text=doc.text, metadata=dict(doc.metadata))


def _result(found: SearchResult) -> VectorStoreQueryResult:
    """Nodes in the results' order, each with its relevance in [0, 1], never rising (`SearchResult.relevances`)."""
    nodes = [_node(Document(h.text, h.id, h.metadata)) for h in found.hits]
    return VectorStoreQueryResult(nodes=nodes, similarities=found.relevances(), ids=[h.id for h in found.hits])


def _documents(nodes: Sequence[BaseNode]) -> list[Document]:
    return [
        Document(
            node.get_content(metadata_mode=MetadataMode.NONE) or " ",
            node.node_id,
            node_to_metadata_dict(node, remove_text=True, flat_metadata=False),
        )
        for node in nodes
    ]


class CorrectedVectorStore(BasePydanticVectorStore):
    """A collection of the service as LlamaIndex's vector store; the server encodes the query text (no embedding
    model is called for it), or searches by `query_embedding` when one is given (in the index's space)."""

    stores_text: bool = True
    is_embedding_query: bool = False
    base_url: str = "http://127.0.0.1:8000"
    collection: str | None = None
    _sync: Client = PrivateAttr()
    _aio: AsyncClient = PrivateAttr()

    def __init__(self, base_url: str = "http://127.0.0.1:8000", api_key: str | None = None, **kwargs: Any):
        timeout = kwargs.pop("timeout", 120.0)
        super().__init__(base_url=base_url, **kwargs)
        self._sync = Client(base_url, api_key, collection=self.collection, timeout=timeout)
        self._aio = AsyncClient(base_url, api_key, collection=self.collection, timeout=timeout)

    @property
    def client(self) -> Client:
        return self._sync

    def add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        return self._sync.add_documents(_documents(nodes))

    async def async_add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        return await self._aio.add_documents(_documents(nodes))

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Every node of the source document."""
        self._sync.delete_documents(filter={"ref_doc_id": ref_doc_id})

    async def adelete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        await self._aio.delete_documents(filter={"ref_doc_id": ref_doc_id})

    def delete_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None, **delete_kwargs: Any
    ) -> None:
        if node_ids is not None:
            self._sync.delete_documents(node_ids)
        if filters is not None:
            self._sync.delete_documents(filter=to_filter(filters))

    def get_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None) -> list[BaseNode]:
        if node_ids is not None:
            return [_node(d) for d in self._sync.get_documents(node_ids)]
        return [_node(d) for d in self._sync.list_documents(to_filter(filters) if filters else None)]

    def clear(self) -> None:
        """Every node of the collection (the collection itself stays)."""
        self._sync.delete_documents([d.id for d in self._sync.list_documents() if d.id is not None])

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        return _result(self._sync.search(query.query_str, query.similarity_top_k, **_search_options(query)))

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        return _result(await self._aio.search(query.query_str, query.similarity_top_k, **_search_options(query)))


class CorrectedEmbedding(BaseEmbedding):
    """The collection's vectors as LlamaIndex's embedding model (`space="search"`: the space its index searches)."""

    base_url: str = "http://127.0.0.1:8000"
    collection: str | None = None
    space: str = "similarity"
    _sync: Client = PrivateAttr()
    _aio: AsyncClient = PrivateAttr()

    def __init__(self, base_url: str = "http://127.0.0.1:8000", api_key: str | None = None, **kwargs: Any):
        super().__init__(base_url=base_url, model_name=kwargs.pop("model_name", "corrected-embeddings"), **kwargs)
        self._sync = Client(base_url, api_key, collection=self.collection)
        self._aio = AsyncClient(base_url, api_key, collection=self.collection)

    def _options(self, role: str) -> dict[str, Any]:
        """Queries with the model's query prompt, texts with its document prompt, as the service indexes them."""
        return {"prompt_name": role} | ({} if self.space == "similarity" else {"space": self.space})

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._sync.embed(query, **self._options("query"))[0]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._sync.embed(text, **self._options("document"))[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._sync.embed(texts, **self._options("document"))

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return (await self._aio.embed(query, **self._options("query")))[0]

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return (await self._aio.embed(text, **self._options("document")))[0]
