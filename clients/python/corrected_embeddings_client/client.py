"""Client and AsyncClient: the service's routes as typed methods, errors as exceptions, 429/503 and lost
connections retried with backoff. Each method is written once (`calls`), and run by either client."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any

import httpx

from corrected_embeddings_client import calls
from corrected_embeddings_client.calls import Call
from corrected_embeddings_client.errors import Unavailable, error_from
from corrected_embeddings_client.models import Document, SearchResult, Tokens

RETRIED = frozenset({429, 503})  # busy or loading: the server says when to come back (Retry-After)
MAX_WAIT = 30.0
API_KEY_VARIABLE = "CE_API_KEY"  # read when no api_key is given


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

    def __init__(self, base_url: str, api_key: str | None, collection: str | None, max_retries: int, timeout: float):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get(API_KEY_VARIABLE)
        self.headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self.collection = None if collection == "default" else collection
        self.max_retries = max_retries
        self.timeout = timeout
        self.prefix = "" if self.collection is None else f"/collections/{self.collection}"

    def scoped(self, name: str) -> _Settings:
        return _Settings(self.base_url, self.api_key, name, self.max_retries, self.timeout)

    def request(self, call: Call) -> dict[str, Any]:
        body = {"content": call.body} if isinstance(call.body, str) else {"json": call.body}
        return {"method": call.method, "url": call.path, "params": call.params, **body}

    def answer(self, call: Call, response: httpx.Response) -> Any:
        if response.status_code == 404 and call.missing is not ...:
            return call.missing
        if response.status_code >= 400:
            raise error_from(response)
        return call.read(response)

    def attempts(self) -> Iterator[tuple[int, bool]]:
        """Each attempt's number, and whether it is the last."""
        for attempt in range(self.max_retries + 1):
            yield attempt, attempt == self.max_retries

    def unreachable(self, exc: httpx.TransportError) -> Unavailable:
        return Unavailable(0, "unreachable", f"{self.base_url}: {type(exc).__name__}: {exc}")


# The calls both clients make, by method name: each builds its request(s) from the collection's prefix and the
# method's arguments; a list of calls is answered by one list, joined; a generator of calls is sent each answer.
METHODS: dict[str, Callable[..., Call | list[Call] | Generator[Call, Any, Any]]] = {
    "embed": calls.embed,
    "similarity": calls.similarity,
    "tokenize": calls.tokenize,
    "add_documents": calls.add_documents,
    "get_document": calls.get_document,
    "get_documents": calls.get_documents,
    "delete_document": calls.delete_document,
    "delete_documents": calls.delete_documents,
    "count_documents": calls.count_documents,
    "list_page": calls.list_documents,
    "update_metadata": calls.update_metadata,
    "search": calls.search,
}


class Client:
    """The service over HTTP; `collection` scopes documents, search and embeddings to one collection. The key is
    `api_key`, else the environment's CE_API_KEY."""

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
        self._s = _Settings(base_url, api_key, collection, max_retries, timeout)
        self._http = http or httpx.Client(base_url=self._s.base_url, headers=self._s.headers, timeout=timeout)

    def collection(self, name: str) -> Client:
        """The same connection, scoped to collection `name`."""
        scoped = Client.__new__(Client)
        scoped._s, scoped._http = self._s.scoped(name), self._http
        return scoped

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, call: Call) -> Any:
        for attempt, last in self._s.attempts():
            try:
                response = self._http.request(**self._s.request(call))
            except httpx.TransportError as exc:  # refused, reset, timed out: the server may be restarting
                if last:
                    raise self._s.unreachable(exc) from exc
                time.sleep(wait_before(attempt, None))
                continue
            if response.status_code not in RETRIED or last:
                return self._s.answer(call, response)
            time.sleep(wait_before(attempt, response))

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        made = METHODS[name](self._s.prefix, *args, **kwargs)
        if isinstance(made, Call):
            return self._run(made)
        if isinstance(made, Generator):  # calls that follow from answers (pages): each answer sent back
            try:
                call = next(made)
                while True:
                    call = made.send(self._run(call))
            except StopIteration as done:
                return done.value
        return [item for call in made for item in self._run(call)]

    def embed(self, texts: str | list[str], **options: Any) -> list[list[float]]:
        """One vector per text (a str is one text), in the collection's corrected space; options: corrected,
        normalize, space ("search": the index's space), prompt_name ("query", "document" or another of the model's
        prompts) or a literal prompt."""
        return self._call("embed", texts, **options)

    def similarity(self, pairs: list[tuple[str, str]], **options: Any) -> list[float]:
        """The corrected cosine of each pair; options: prompt_name or prompt, as embed() takes them."""
        return self._call("similarity", pairs, **options)

    def tokenize(self, texts: str | list[str]) -> list[Tokens]:
        """Each text's tokens as the backbone sees them."""
        return self._call("tokenize", texts)

    def add_documents(self, documents: Sequence[Document | dict[str, Any] | str]) -> list[str]:
        """Store and index documents (an existing id is replaced); their ids, in order."""
        return self._call("add_documents", documents)

    def get_document(self, doc_id: str) -> Document | None:
        return self._call("get_document", doc_id)

    def get_documents(self, ids: list[str]) -> list[Document]:
        """Those found, in the order asked, in one request per 128 ids."""
        return self._call("get_documents", ids)

    def delete_document(self, doc_id: str) -> bool:
        """Whether it existed."""
        return self._call("delete_document", doc_id)

    def delete_documents(self, ids: list[str] | None = None, *, filter: dict[str, Any] | None = None) -> int:
        """How many of these ids (or of those the filter selects) existed; they are gone."""
        return sum(self._call("delete_documents", ids, filter))

    def count_documents(self, filter: dict[str, Any] | None = None) -> int:
        return self._call("count_documents", filter)

    def list_documents(self, filter: dict[str, Any] | None = None, *, page: int = 100) -> Iterator[Document]:
        """Every document (those the filter selects) in id order, a page at a time."""
        cursor = None
        while True:
            docs, cursor = self._call("list_page", page, cursor, filter)
            yield from docs
            if cursor is None:
                return

    def update_metadata(self, metadata: dict[str, dict[str, Any]], *, merge: bool = False) -> list[str]:
        """Replace (or merge into) documents' metadata by id; nothing is encoded again."""
        return self._call("update_metadata", metadata, merge)

    def search(self, q: str | None, k: int = 10, **options: Any) -> SearchResult:
        """Options as the API names them: mode, filter, vector, like (a stored document's id, with q None: more like
        it), mmr, score_threshold, fusion, include_vectors, ..."""
        return self._call("search", q, k, **options)

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
        return served(name, described)


def served(name: str, described: dict[str, Any] | None) -> dict[str, Any]:
    if described is None:
        raise LookupError(f"collection {name!r} does not exist")
    if described["state"] != "ready":
        raise RuntimeError(f"collection {name!r} is {described['state']}: {described.get('error', '')}")
    return described
