"""LangChain's Embeddings and VectorStore on the service: the server encodes, corrects, stores and ranks, so the
vector store needs no embedding model of its own (`embedding` arguments are accepted for the interface)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.documents import Document as LangChainDocument
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore

from corrected_embeddings_client.client import AsyncClient, Client
from corrected_embeddings_client.models import Document, SearchHit


class _Connection:
    """One sync and one async client on the same server, key and collection."""

    def __init__(self, base_url: str, api_key: str | None, collection: str | None, timeout: float):
        self.sync = Client(base_url, api_key, collection=collection, timeout=timeout)
        self.aio = AsyncClient(base_url, api_key, collection=collection, timeout=timeout)


class CorrectedEmbeddings(Embeddings):
    """Vectors in the collection's corrected space: queries and documents are encoded alike (a symmetric model)."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        api_key: str | None = None,
        *,
        collection: str | None = None,
        timeout: float = 120.0,
    ):
        self._to = _Connection(base_url, api_key, collection, timeout)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._to.sync.embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._to.sync.embed([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await self._to.aio.embed(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return (await self._to.aio.embed([text]))[0]


def _to_service(texts: Iterable[str], metadatas: list[dict] | None, ids: list[str | None] | None) -> list[Document]:
    texts = list(texts)
    if metadatas is not None and len(metadatas) != len(texts):
        raise ValueError(f"{len(metadatas)} metadatas for {len(texts)} texts")
    if ids is not None and len(ids) != len(texts):
        raise ValueError(f"{len(ids)} ids for {len(texts)} texts")
    return [
        Document(text, ids[i] if ids else None, dict(metadatas[i]) if metadatas else {}) for i, text in enumerate(texts)
    ]


def _to_langchain(hit: SearchHit | Document) -> LangChainDocument:
    return LangChainDocument(page_content=hit.text, metadata=hit.metadata, id=hit.id)


def _search_options(filter: dict[str, Any] | None, options: dict[str, Any]) -> dict[str, Any]:
    """LangChain's `filter` and the API's own options (mode, score_threshold, fusion, ...) as the API takes them."""
    return {"filter": filter, **options}


class CorrectedVectorStore(VectorStore):
    """A collection of the service as a LangChain vector store: hybrid search by default (`mode` to choose);
    scores are corrected cosines, relevance (cosine + 1) / 2."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        api_key: str | None = None,
        *,
        collection: str | None = None,
        timeout: float = 120.0,
        embedding: Embeddings | None = None,
    ):
        self._to = _Connection(base_url, api_key, collection, timeout)
        self._embeddings = embedding or CorrectedEmbeddings(base_url, api_key, collection=collection, timeout=timeout)

    @property
    def embeddings(self) -> Embeddings:
        return self._embeddings

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict] | None = None,
        *,
        ids: list[str | None] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Stored and indexed when this returns; an id already stored is replaced."""
        return self._to.sync.add_documents(_to_service(texts, metadatas, ids))

    async def aadd_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict] | None = None,
        *,
        ids: list[str | None] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        return await self._to.aio.add_documents(_to_service(texts, metadatas, ids))

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """True when every id was stored; ids that were not are skipped."""
        if ids is None:
            raise ValueError("delete needs ids: delete the collection to drop all of it")
        return all([self._to.sync.delete_document(i) for i in ids])

    async def adelete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        if ids is None:
            raise ValueError("delete needs ids: delete the collection to drop all of it")
        return all([await self._to.aio.delete_document(i) for i in ids])

    def get_by_ids(self, ids: Sequence[str], /) -> list[LangChainDocument]:
        found = [self._to.sync.get_document(i) for i in ids]
        return [_to_langchain(d) for d in found if d is not None]

    async def aget_by_ids(self, ids: Sequence[str], /) -> list[LangChainDocument]:
        found = [await self._to.aio.get_document(i) for i in ids]
        return [_to_langchain(d) for d in found if d is not None]

    def similarity_search_with_score(
        self, query: str, k: int = 4, filter: dict[str, Any] | None = None, **options: Any
    ) -> list[tuple[LangChainDocument, float]]:
        """Options: mode (dense, lexical, hybrid), score_threshold, fusion, lexical_weight, explain, ..."""
        result = self._to.sync.search(query, k, **_search_options(filter, options))
        return [(_to_langchain(h), h.score) for h in result.hits]

    async def asimilarity_search_with_score(
        self, query: str, k: int = 4, filter: dict[str, Any] | None = None, **options: Any
    ) -> list[tuple[LangChainDocument, float]]:
        result = await self._to.aio.search(query, k, **_search_options(filter, options))
        return [(_to_langchain(h), h.score) for h in result.hits]

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[LangChainDocument]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    async def asimilarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[LangChainDocument]:
        return [doc for doc, _ in await self.asimilarity_search_with_score(query, k, **kwargs)]

    def _select_relevance_score_fn(self):
        return lambda cosine: (cosine + 1.0) / 2.0

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings | None = None,
        metadatas: list[dict] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> CorrectedVectorStore:
        """kwargs: base_url, api_key, collection, timeout, as the constructor takes them."""
        store = cls(embedding=embedding, **kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store
