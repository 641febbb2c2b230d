"""Client and AsyncClient: the service's routes as typed methods, errors as exceptions, 429/503 retried."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import httpx

from corrected_embeddings_client import calls
from corrected_embeddings_client.calls import Call
from corrected_embeddings_client.errors import error_from
from corrected_embeddings_client.models import Document, SearchResult, Tokens

RETRIED = frozenset({429, 503})  # busy or loading: the server says when to come back (Retry-After)
MAX_WAIT = 30.0


def wait_before(attempt: int, response: httpx.Response | None) -> float:
    """The server's Retry-After when it sent one, else exponential backoff with jitter; at most MAX_WAIT."""
    header = response.headers.get("retry-after") if response is not None else None
    try:
        wait = float(header) if header is not None else 0.25 * 2**attempt * (1 + random.random())
    except ValueError:  # an HTTP date: not sent by this server; back off as without one
        wait = 0.25 * 2**attempt
    return min(max(wait, 0.0), MAX_WAIT)


class _Settings:
    """What both clients hold: the server, the key, the collection, and how often to retry."""

    def __init__(self, base_url: str, api_key: str | None, collection: str | None, max_retries: int):
        self.base_url = base_url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.collection = None if collection == "default" else collection
        self.max_retries = max_retries
        self.prefix = "" if self.collection is None else f"/collections/{self.collection}"

    def request(self, call: Call) -> dict[str, Any]:
        body = {"content": call.body} if isinstance(call.body, str) else {"json": call.body}
        return {"method": call.method, "url": call.path, "params": call.params, **body}

    def answer(self, call: Call, response: httpx.Response) -> Any:
        if response.status_code == 404 and call.missing is not ...:
            return call.missing
        if response.status_code >= 400:
            raise error_from(response)
        return call.read(response)


class Client:
    """The service over HTTP; `collection` scopes documents, search and embeddings to one collection."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        api_key: str | None = None,
        *,
        collection: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 5,
        http: httpx.Client | None = None,
    ):
        self._s = _Settings(base_url, api_key, collection, max_retries)
        self._http = http or httpx.Client(base_url=self._s.base_url, headers=self._s.headers, timeout=timeout)

    def collection(self, name: str) -> Client:
        """The same connection, scoped to collection `name`."""
        return Client(self._s.base_url, collection=name, max_retries=self._s.max_retries, http=self._http)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, call: Call) -> Any:
        for attempt in range(self._s.max_retries + 1):
            response = self._http.request(**self._s.request(call))
            if response.status_code not in RETRIED or attempt == self._s.max_retries:
                return self._s.answer(call, response)
            time.sleep(wait_before(attempt, response))

    def _run_all(self, batch: list[Call]) -> list[Any]:
        return [item for call in batch for item in self._run(call)]

    def embed(
        self, texts: list[str], *, corrected: bool | None = None, normalize: bool | None = None
    ) -> list[list[float]]:
        """One vector per text, in the collection's corrected space (L2-normalized unless `normalize=False`)."""
        return self._run_all(calls.embed(self._s.prefix, texts, corrected=corrected, normalize=normalize))

    def similarity(self, pairs: list[tuple[str, str]]) -> list[float]:
        """The corrected cosine of each pair."""
        return self._run_all(calls.similarity(self._s.prefix, pairs))

    def tokenize(self, texts: list[str]) -> list[Tokens]:
        """Each text's tokens as the backbone sees them."""
        return self._run_all(calls.tokenize(self._s.prefix, texts))

    def add_documents(self, documents: list[Document | dict[str, Any] | str]) -> list[str]:
        """Store and index documents (an existing id is replaced); their ids, in order."""
        return self._run_all(calls.add_documents(self._s.prefix, documents))

    def get_document(self, doc_id: str) -> Document | None:
        return self._run(calls.get_document(self._s.prefix, doc_id))

    def delete_document(self, doc_id: str) -> bool:
        """Whether it existed."""
        return self._run(calls.delete_document(self._s.prefix, doc_id))

    def search(self, q: str, k: int = 10, **options: Any) -> SearchResult:
        """Options as the API names them: mode, filter, score_threshold, fusion, lexical_weight, explain, ..."""
        return self._run(calls.search(self._s.prefix, q, k, **options))

    def info(self) -> dict[str, Any]:
        """/info for the default collection (backbone, correction, dim, index), else the collection's description."""
        return self._run(calls.info(self._s.collection))

    def create_collection(self, name: str, **settings: Any) -> dict[str, Any]:
        """Settings as `POST /collections` names them (backbone, pooling, search_mode, ...)."""
        return self._run(calls.create_collection(name, settings))

    def describe_collection(self, name: str) -> dict[str, Any] | None:
        return self._run(calls.describe_collection(name))

    def list_collections(self) -> list[dict[str, Any]]:
        return self._run(calls.list_collections())

    def delete_collection(self, name: str) -> bool:
        """Whether it existed."""
        return self._run(calls.delete_collection(name))

    def wait_ready(self, name: str, timeout: float = 300.0) -> dict[str, Any]:
        """A new collection's description once it serves (its backbone loaded); raises if it failed or timed out."""
        deadline = time.monotonic() + timeout
        while (described := self.describe_collection(name)) and described["state"] == "loading":
            if time.monotonic() > deadline:
                raise TimeoutError(f"collection {name!r} still loading after {timeout} s")
            time.sleep(0.2)
        return _served(name, described)


class AsyncClient:
    """Client's methods as coroutines, on one httpx.AsyncClient."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        api_key: str | None = None,
        *,
        collection: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 5,
        http: httpx.AsyncClient | None = None,
    ):
        self._s = _Settings(base_url, api_key, collection, max_retries)
        self._http = http or httpx.AsyncClient(base_url=self._s.base_url, headers=self._s.headers, timeout=timeout)

    def collection(self, name: str) -> AsyncClient:
        return AsyncClient(self._s.base_url, collection=name, max_retries=self._s.max_retries, http=self._http)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _run(self, call: Call) -> Any:
        for attempt in range(self._s.max_retries + 1):
            response = await self._http.request(**self._s.request(call))
            if response.status_code not in RETRIED or attempt == self._s.max_retries:
                return self._s.answer(call, response)
            await asyncio.sleep(wait_before(attempt, response))

    async def _run_all(self, batch: list[Call]) -> list[Any]:
        return [item for call in batch for item in await self._run(call)]

    async def embed(
        self, texts: list[str], *, corrected: bool | None = None, normalize: bool | None = None
    ) -> list[list[float]]:
        return await self._run_all(calls.embed(self._s.prefix, texts, corrected=corrected, normalize=normalize))

    async def similarity(self, pairs: list[tuple[str, str]]) -> list[float]:
        return await self._run_all(calls.similarity(self._s.prefix, pairs))

    async def tokenize(self, texts: list[str]) -> list[Tokens]:
        return await self._run_all(calls.tokenize(self._s.prefix, texts))

    async def add_documents(self, documents: list[Document | dict[str, Any] | str]) -> list[str]:
        return await self._run_all(calls.add_documents(self._s.prefix, documents))

    async def get_document(self, doc_id: str) -> Document | None:
        return await self._run(calls.get_document(self._s.prefix, doc_id))

    async def delete_document(self, doc_id: str) -> bool:
        return await self._run(calls.delete_document(self._s.prefix, doc_id))

    async def search(self, q: str, k: int = 10, **options: Any) -> SearchResult:
        return await self._run(calls.search(self._s.prefix, q, k, **options))

    async def info(self) -> dict[str, Any]:
        return await self._run(calls.info(self._s.collection))

    async def create_collection(self, name: str, **settings: Any) -> dict[str, Any]:
        return await self._run(calls.create_collection(name, settings))

    async def describe_collection(self, name: str) -> dict[str, Any] | None:
        return await self._run(calls.describe_collection(name))

    async def list_collections(self) -> list[dict[str, Any]]:
        return await self._run(calls.list_collections())

    async def delete_collection(self, name: str) -> bool:
        return await self._run(calls.delete_collection(name))


def _served(name: str, described: dict[str, Any] | None) -> dict[str, Any]:
    if described is None:
        raise LookupError(f"collection {name!r} does not exist")
    if described["state"] != "ready":
        raise RuntimeError(f"collection {name!r} is {described['state']}: {described.get('error', '')}")
    return described
