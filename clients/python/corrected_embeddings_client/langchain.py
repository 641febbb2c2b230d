"""LangChain's Embeddings and VectorStore on the service: the server encodes, corrects, stores and ranks, so the
vector store needs no embedding model of its own; its `embeddings` give vectors in the index's space, so that the
by-vector methods search with them."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.documents import Document as LangChainDocument
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore

from corrected_embeddings_client.aio import AsyncClient
from corrected_embeddings_client.client import Client
from corrected_embeddings_client.models import Document, SearchHit, SearchResult

SEARCH_DETAILS = "_search"  # the metadata key of a scored hit's cosine, BM25 and best passage


class _Connection:
    """One sync and one async client on the same server, key and collection."""

    def __init__(self, base_url: str, api_key: str | None, collection: str | None, timeout: float):
        self.sync = Client(base_url, api_key, collection=collection, timeout=timeout)
        self.aio = AsyncClient(base_url, api_key, collection=collection, timeout=timeout)


class CorrectedEmbeddings(Embeddings):
    """Vectors in the collection's corrected space (`space="search"`: the space its index searches); queries and
    documents are encoded alike (a symmetric model)."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        api_key: str | None = None,
        *,
        collection: str | None = None,
        timeout: float = 120.0,
        space: str = "similarity",
    ):
        self._to = _Connection(base_url, api_key, collection, timeout)
        self.space = space
        self._space = {} if space == "similarity" else {"space": space}

    # Documents and queries with the model's document and query prompts, as the service encodes and searches them.
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._to.sync.embed(texts, prompt_name="document", **self._space)

    def embed_query(self, text: str) -> list[float]:
        return self._to.sync.embed(text, prompt_name="query", **self._space)[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await self._to.aio.embed(texts, prompt_name="document", **self._space)

    async def aembed_query(self, text: str) -> list[float]:
        return (await self._to.aio.embed(text, prompt_name="query", **self._space))[0]


def _to_service(
    texts: Iterable[str], metadatas: list[dict[str, Any]] | None, ids: Sequence[str | None] | None
) -> list[Document]:
    """One document per text, each with an id (a new one where none is given); an id given twice is refused."""
    texts = list(texts)
    if metadatas is not None and len(metadatas) != len(texts):
        raise ValueError(f"{len(metadatas)} metadatas for {len(texts)} texts")
    if ids is not None and len(ids) != len(texts):
        raise ValueError(f"{len(ids)} ids for {len(texts)} texts")
    named = [(ids[i] if ids else None) or str(uuid.uuid4()) for i in range(len(texts))]
    if len(set(named)) < len(named):
        twice = sorted({i for i in named if named.count(i) > 1})
        raise ValueError(f"duplicate ids in one call: {', '.join(map(repr, twice[:5]))}")
    return [Document(text, named[i], dict(metadatas[i]) if metadatas else {}) for i, text in enumerate(texts)]


def _to_langchain(hit: SearchHit | Document, *, details: bool = False) -> LangChainDocument:
    """The whole stored text, as every store and `get_by_ids` return it; a scored hit's best passage, cosine and BM25
    in its metadata."""
    metadata = dict(hit.metadata)
    if details and isinstance(hit, SearchHit):
        passage = hit.passage or None
        metadata[SEARCH_DETAILS] = {"cosine": hit.score, "bm25": hit.lexical_score, "passage": passage}
    return LangChainDocument(page_content=hit.text, metadata=metadata, id=hit.id)


def _scored(result: SearchResult) -> list[tuple[LangChainDocument, float]]:
    """Each hit with what ordered the results (the fused score in hybrid mode), its cosine in the metadata."""
    return [(_to_langchain(h, details=True), h.rank_score) for h in result.hits]


def _relevant(result: SearchResult) -> list[tuple[LangChainDocument, float]]:
    """Each hit in the results' order with its relevance in [0, 1], never rising (`SearchResult.relevances`)."""
    return [(_to_langchain(h), r) for h, r in zip(result.hits, result.relevances(), strict=True)]


def _mmr(
    k: int, fetch_k: int, lambda_mult: float, filter: dict[str, Any] | None, options: dict[str, Any]
) -> dict[str, Any]:
    return {"filter": filter, "mmr": {"lambda": lambda_mult, "fetch_k": max(fetch_k, k)}, **options}


class CorrectedVectorStore(VectorStore):
    """A collection of the service as a LangChain vector store: hybrid search by default (`mode` to choose),
    filters with MongoDB's operators, MMR and search by vector done by the server. A document comes back whole (a
    scored hit's best passage in its metadata); a k past the server's page is read page by page."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        api_key: str | None = None,
        *,
        collection: str | None = None,
        timeout: float = 120.0,
        embedding: Embeddings | None = None,
    ):
        if isinstance(embedding, CorrectedEmbeddings) and embedding.space != "search":
            raise ValueError(
                f"embedding gives the {embedding.space} space's vectors, and the index searches its search space: "
                "pass CorrectedEmbeddings(space='search'), or no embedding (the store makes that one)"
            )
        self._to = _Connection(base_url, api_key, collection, timeout)
        self._embeddings = embedding or CorrectedEmbeddings(
            base_url, api_key, collection=collection, timeout=timeout, space="search"
        )

    @property
    def embeddings(self) -> Embeddings:
        return self._embeddings

    def close(self) -> None:
        self._to.sync.close()

    def __enter__(self) -> CorrectedVectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def aclose(self) -> None:
        await self._to.aio.aclose()

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Stored and indexed when this returns, one document each; an id already stored is replaced."""
        return self._to.sync.add_documents(_to_service(texts, metadatas, ids))

    async def aadd_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        return await self._to.aio.add_documents(_to_service(texts, metadatas, ids))

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """These ids (or `filter=...`: those it selects) deleted in one request per 128; missing ids are skipped."""
        if ids is None and kwargs.get("filter") is None:
            raise ValueError("delete needs ids or filter: delete the collection to drop all of it")
        self._to.sync.delete_documents(ids, filter=kwargs.get("filter"))
        return True

    async def adelete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        if ids is None and kwargs.get("filter") is None:
            raise ValueError("delete needs ids or filter: delete the collection to drop all of it")
        await self._to.aio.delete_documents(ids, filter=kwargs.get("filter"))
        return True

    def get_by_ids(self, ids: Sequence[str], /) -> list[LangChainDocument]:
        return [_to_langchain(d) for d in self._to.sync.get_documents(list(ids))]

    async def aget_by_ids(self, ids: Sequence[str], /) -> list[LangChainDocument]:
        return [_to_langchain(d) for d in await self._to.aio.get_documents(list(ids))]

    def similarity_search_with_score(
        self, query: str, k: int = 4, filter: dict[str, Any] | None = None, **options: Any
    ) -> list[tuple[LangChainDocument, float]]:
        """Scores in the results' order (the fused score in hybrid mode); the cosine, BM25 and best passage in each
        document's metadata["_search"]. Options: mode, score_threshold, fusion, lexical_weight, ..."""
        return _scored(self._to.sync.search(query, k, filter=filter, **options))

    async def asimilarity_search_with_score(
        self, query: str, k: int = 4, filter: dict[str, Any] | None = None, **options: Any
    ) -> list[tuple[LangChainDocument, float]]:
        return _scored(await self._to.aio.search(query, k, filter=filter, **options))

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[LangChainDocument]:
        return [_to_langchain(h) for h in self._to.sync.search(query, k, **kwargs).hits]

    async def asimilarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[LangChainDocument]:
        return [_to_langchain(h) for h in (await self._to.aio.search(query, k, **kwargs)).hits]

    def _similarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[LangChainDocument, float]]:
        return _relevant(self._to.sync.search(query, k, **kwargs))

    async def _asimilarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[LangChainDocument, float]]:
        return _relevant(await self._to.aio.search(query, k, **kwargs))

    def similarity_search_by_vector(self, embedding: list[float], k: int = 4, **kwargs: Any) -> list[LangChainDocument]:
        """`embedding` in the index's space, as this store's `embeddings` give it."""
        return [_to_langchain(h) for h in self._to.sync.search(None, k, vector=embedding, **kwargs).hits]

    async def asimilarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[LangChainDocument]:
        return [_to_langchain(h) for h in (await self._to.aio.search(None, k, vector=embedding, **kwargs)).hits]

    def similarity_search_with_score_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[tuple[LangChainDocument, float]]:
        return _scored(self._to.sync.search(None, k, vector=embedding, **kwargs))

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: dict[str, Any] | None = None,
        **options: Any,
    ) -> list[LangChainDocument]:
        """The first fetch_k results re-ordered by the server (MMR on their stored vectors), k of them."""
        found = self._to.sync.search(query, k, **_mmr(k, fetch_k, lambda_mult, filter, options))
        return [_to_langchain(h) for h in found.hits]

    async def amax_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: dict[str, Any] | None = None,
        **options: Any,
    ) -> list[LangChainDocument]:
        found = await self._to.aio.search(query, k, **_mmr(k, fetch_k, lambda_mult, filter, options))
        return [_to_langchain(h) for h in found.hits]

    def max_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: dict[str, Any] | None = None,
        **options: Any,
    ) -> list[LangChainDocument]:
        options = {"vector": embedding, **options}
        found = self._to.sync.search(None, k, **_mmr(k, fetch_k, lambda_mult, filter, options))
        return [_to_langchain(h) for h in found.hits]

    async def amax_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: dict[str, Any] | None = None,
        **options: Any,
    ) -> list[LangChainDocument]:
        options = {"vector": embedding, **options}
        found = await self._to.aio.search(None, k, **_mmr(k, fetch_k, lambda_mult, filter, options))
        return [_to_langchain(h) for h in found.hits]

    @classmethod
    def from_documents(
        cls, documents: list[LangChainDocument], embedding: Embeddings | None = None, **kwargs: Any
    ) -> CorrectedVectorStore:
        """As `from_texts`, the documents' ids kept where they have them."""
        if "ids" not in kwargs and any(d.id for d in documents):
            kwargs["ids"] = [d.id for d in documents]
        texts, metadatas = [d.page_content for d in documents], [d.metadata for d in documents]
        return cls.from_texts(texts, embedding, metadatas, **kwargs)

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings | None = None,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> CorrectedVectorStore:
        """kwargs: base_url, api_key, collection, timeout, as the constructor takes them, and `collection_settings`
        (as POST /collections takes them) for a collection that does not exist yet: it is created first."""
        settings = kwargs.pop("collection_settings", {})
        store = cls(embedding=embedding, **kwargs)
        name = kwargs.get("collection")
        if name not in (None, "default") and store._to.sync.describe_collection(name) is None:
            store._to.sync.create_collection(name, **settings)
            store._to.sync.wait_ready(name)
        store.add_texts(texts, metadatas, ids=ids)
        return store
