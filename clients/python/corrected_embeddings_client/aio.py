"""AsyncClient: Client's methods as coroutines. It keeps one connection pool per event loop, so one client serves
every `asyncio.run()` a program makes (a pool is bound to the loop that opened it)."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Generator, Sequence
from typing import Any

import httpx

from corrected_embeddings_client import calls
from corrected_embeddings_client.calls import Call
from corrected_embeddings_client.client import METHODS, RETRIED, _Settings, served, wait_before
from corrected_embeddings_client.models import Document, SearchResult, Tokens


class AsyncClient:
    """The service over HTTP, awaited; `collection` scopes documents, search and embeddings to one collection."""

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
        self._s = _Settings(base_url, api_key, collection, max_retries, timeout)
        self._given = http
        self._pools: dict[int, tuple[weakref.ref[asyncio.AbstractEventLoop], httpx.AsyncClient]] = {}

    def collection(self, name: str) -> AsyncClient:
        scoped = AsyncClient.__new__(AsyncClient)
        scoped._s, scoped._given, scoped._pools = self._s.scoped(name), self._given, self._pools
        return scoped

    def _http(self) -> httpx.AsyncClient:
        """The running loop's pool, opened on first use; pools of loops that have ended are let go."""
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        held = self._pools.get(id(loop))
        if held is None or held[0]() is not loop:
            for key, (ref, _) in list(self._pools.items()):
                if (old := ref()) is None or old.is_closed():
                    del self._pools[key]
            pool = httpx.AsyncClient(base_url=self._s.base_url, headers=self._s.headers, timeout=self._s.timeout)
            self._pools[id(loop)] = held = (weakref.ref(loop), pool)
        return held[1]

    async def aclose(self) -> None:
        """Close the running loop's pool (the others closed with their loops)."""
        held = self._pools.pop(id(asyncio.get_running_loop()), None)
        if held is not None:
            await held[1].aclose()
        if self._given is not None:
            await self._given.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _run(self, call: Call) -> Any:
        for attempt, last in self._s.attempts():
            try:
                response = await self._http().request(**self._s.request(call))
            except httpx.TransportError as exc:
                if last:
                    raise self._s.unreachable(exc) from exc
                await asyncio.sleep(wait_before(attempt, None))
                continue
            if response.status_code not in RETRIED or last:
                return self._s.answer(call, response)
            await asyncio.sleep(wait_before(attempt, response))

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        made = METHODS[name](self._s.prefix, *args, **kwargs)
        if isinstance(made, Call):
            return await self._run(made)
        if isinstance(made, Generator):  # calls that follow from answers (pages): each answer sent back
            try:
                call = next(made)
                while True:
                    call = made.send(await self._run(call))
            except StopIteration as done:
                return done.value
        return [item for call in made for item in await self._run(call)]

    async def embed(self, texts: str | list[str], **options: Any) -> list[list[float]]:
        return await self._call("embed", texts, **options)

    async def similarity(self, pairs: list[tuple[str, str]], **options: Any) -> list[float]:
        return await self._call("similarity", pairs, **options)

    async def tokenize(self, texts: str | list[str]) -> list[Tokens]:
        return await self._call("tokenize", texts)

    async def add_documents(self, documents: Sequence[Document | dict[str, Any] | str]) -> list[str]:
        return await self._call("add_documents", documents)

    async def get_document(self, doc_id: str) -> Document | None:
        return await self._call("get_document", doc_id)

    async def get_documents(self, ids: list[str]) -> list[Document]:
        return await self._call("get_documents", ids)

    async def delete_document(self, doc_id: str) -> bool:
        return await self._call("delete_document", doc_id)

    async def delete_documents(self, ids: list[str] | None = None, *, filter: dict[str, Any] | None = None) -> int:
        return sum(await self._call("delete_documents", ids, filter))

    async def count_documents(self, filter: dict[str, Any] | None = None) -> int:
        return await self._call("count_documents", filter)

    async def list_documents(self, filter: dict[str, Any] | None = None, *, page: int = 100) -> AsyncIterator[Document]:
        cursor = None
        while True:
            docs, cursor = await self._call("list_page", page, cursor, filter)
            for doc in docs:
                yield doc
            if cursor is None:
                return

    async def update_metadata(self, metadata: dict[str, dict[str, Any]], *, merge: bool = False) -> list[str]:
        return await self._call("update_metadata", metadata, merge)

    async def search(self, q: str | None, k: int = 10, **options: Any) -> SearchResult:
        return await self._call("search", q, k, **options)

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

    async def wait_ready(self, name: str, timeout: float = 300.0) -> dict[str, Any]:
        deadline = asyncio.get_running_loop().time() + timeout
        while (described := await self.describe_collection(name)) and described["state"] == "loading":
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"collection {name!r} still loading after {timeout} s")
            await asyncio.sleep(0.2)
        return served(name, described)
