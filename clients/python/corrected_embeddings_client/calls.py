"""Each API call as data (method, path, body, how to read the answer): the sync and the async client run the same
calls, so what a route takes and returns is written once."""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote

import httpx

from corrected_embeddings_client.models import Document, SearchResult, Tokens

# Texts per request: far under the server's 4,096-item bound, and a round of encoding stays short.
BATCH = 128
PAGE = 1000  # results per search request: the server's default CE_MAX_K; more are read through next_cursor


def _json(response: httpx.Response) -> Any:
    return response.json() if response.content else None


@dataclass(frozen=True)
class Call:
    """One request, and what its answer becomes; `missing` is returned for a 404 instead of raising."""

    method: str
    path: str
    body: Any = None
    params: dict[str, Any] | None = None
    read: Callable[[httpx.Response], Any] = _json
    missing: Any = ...


def _batches(items: list[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(items), BATCH):
        yield items[start : start + BATCH]


def _document(item: Document | dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(item, Document):
        return item.as_json()
    return {"text": item} if isinstance(item, str) else dict(item)


def _asked(options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if v is not None}


def _texts(texts: str | Iterable[str]) -> list[str]:
    """A str is one text, never its characters."""
    return [texts] if isinstance(texts, str) else list(texts)


def embed(prefix: str, texts: str | list[str], **options: Any) -> list[Call]:
    return [
        Call("POST", f"{prefix}/embed", {"texts": batch, **_asked(options)}, read=lambda r: r.json()["embeddings"])
        for batch in _batches(_texts(texts))
    ]


def similarity(prefix: str, pairs: list[tuple[str, str]], **options: Any) -> list[Call]:
    return [
        Call(
            "POST",
            f"{prefix}/similarity",
            {"pairs": [list(p) for p in batch], **_asked(options)},
            read=lambda r: r.json()["scores"],
        )
        for batch in _batches(list(pairs))
    ]


def tokenize(prefix: str, texts: list[str]) -> list[Call]:
    def read(r: httpx.Response) -> list[Tokens]:
        return [Tokens(t["tokens"], t["count"], t["truncated"]) for t in r.json()["texts"]]

    return [Call("POST", f"{prefix}/tokenize", {"texts": batch}, read=read) for batch in _batches(_texts(texts))]


def add_documents(prefix: str, documents: Iterable[Document | dict[str, Any] | str]) -> list[Call]:
    bodies = [_document(d) for d in documents]
    return [
        Call("POST", f"{prefix}/documents", {"documents": batch}, read=lambda r: r.json()["ids"])
        for batch in _batches(bodies)
    ]


def _stored(body: dict[str, Any]) -> Document:
    return Document(body["text"], body["id"], body["metadata"])


def get_document(prefix: str, doc_id: str) -> Call:
    return Call("GET", f"{prefix}/documents/{quote(doc_id, safe='')}", read=lambda r: _stored(r.json()), missing=None)


def get_documents(prefix: str, ids: Iterable[str]) -> list[Call]:
    """Those found, in the order asked (the missing left out)."""
    read = lambda r: [_stored(d) for d in r.json()["documents"]]  # noqa: E731
    return [Call("POST", f"{prefix}/documents/get", {"ids": batch}, read=read) for batch in _batches(list(ids))]


def delete_documents(prefix: str, ids: Iterable[str] | None = None, filter: dict[str, Any] | None = None) -> list[Call]:
    """How many existed, per request: by ids (in batches) or by a filter."""
    read = lambda r: [r.json()["deleted"]]  # noqa: E731
    if filter is not None:
        return [Call("POST", f"{prefix}/documents/delete", {"filter": filter}, read=read)]
    return [
        Call("POST", f"{prefix}/documents/delete", {"ids": batch}, read=read) for batch in _batches(list(ids or []))
    ]


def count_documents(prefix: str, filter: dict[str, Any] | None = None) -> Call:
    return Call("POST", f"{prefix}/documents/count", _asked({"filter": filter}), read=lambda r: r.json()["count"])


def list_documents(
    prefix: str, limit: int = 100, cursor: str | None = None, filter: dict[str, Any] | None = None
) -> Call:
    """One page: (documents in id order, the next page's cursor or None)."""
    params = _asked({"limit": limit, "cursor": cursor, "filter": json.dumps(filter) if filter is not None else None})
    read = lambda r: ([_stored(d) for d in r.json()["documents"]], r.json()["next_cursor"])  # noqa: E731
    return Call("GET", f"{prefix}/documents", params=params, read=read)


def update_metadata(prefix: str, metadata: dict[str, dict[str, Any]], merge: bool = False) -> list[Call]:
    items = [{"id": doc_id, "metadata": m} for doc_id, m in metadata.items()]
    return [
        Call(
            "POST",
            f"{prefix}/documents/metadata",
            {"documents": batch, "merge": merge},
            read=lambda r: r.json()["ids"],
        )
        for batch in _batches(items)
    ]


def delete_document(prefix: str, doc_id: str) -> Call:
    return Call("DELETE", f"{prefix}/documents/{quote(doc_id, safe='')}", read=lambda r: True, missing=False)


def search(prefix: str, q: str | None, k: int = 10, **options: Any) -> Generator[Call, SearchResult, SearchResult]:
    """POST: a filter, feedback or mmr object needs no JSON in the URL, and a long query no URL limit; `vector`
    searches by a vector (with or without q), `like` by a stored document (q None). A k past the server's page
    (PAGE) is read page by page through next_cursor: every page is cut from one ranking, so they join exactly."""
    asked = {"q": q, **_asked(options)}
    read = SearchResult.from_json
    found = yield Call("POST", f"{prefix}/search", {**asked, "k": min(k, PAGE)}, read=lambda r: read(r.json()))
    hits = list(found.hits)
    while len(hits) < k and found.next_cursor is not None:
        more = {**asked, "k": min(k - len(hits), PAGE), "cursor": found.next_cursor}
        found = yield Call("POST", f"{prefix}/search", more, read=lambda r: read(r.json()))
        hits += found.hits
    return replace(found, hits=hits)


def info(collection: str | None) -> Call:
    """The service's /info (backbone, correction, dim, index), or a named collection's description."""
    return Call("GET", "/info") if collection is None else describe_collection(collection)


def create_collection(name: str, settings: dict[str, Any]) -> Call:
    return Call("POST", "/collections", {"name": name, **_asked(settings)})


def describe_collection(name: str) -> Call:
    return Call("GET", f"/collections/{quote(name, safe='')}", missing=None)


def list_collections() -> Call:
    return Call("GET", "/collections", read=lambda r: r.json()["collections"])


def delete_collection(name: str) -> Call:
    return Call("DELETE", f"/collections/{quote(name, safe='')}", read=lambda r: True, missing=False)
