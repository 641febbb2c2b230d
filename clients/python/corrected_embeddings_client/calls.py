"""Each API call as data (method, path, body, how to read the answer): the sync and the async client run the same
calls, so what a route takes and returns is written once."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from corrected_embeddings_client.models import Document, SearchResult, Tokens

# Texts per request: far under the server's 4,096-item bound, and a round of encoding stays short.
BATCH = 128


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


def embed(prefix: str, texts: list[str], **options: Any) -> list[Call]:
    return [
        Call("POST", f"{prefix}/embed", {"texts": batch, **_asked(options)}, read=lambda r: r.json()["embeddings"])
        for batch in _batches(list(texts))
    ]


def similarity(prefix: str, pairs: list[tuple[str, str]]) -> list[Call]:
    return [
        Call("POST", f"{prefix}/similarity", {"pairs": [list(p) for p in batch]}, read=lambda r: r.json()["scores"])
        for batch in _batches(list(pairs))
    ]


def tokenize(prefix: str, texts: list[str]) -> list[Call]:
    def read(r: httpx.Response) -> list[Tokens]:
        return [Tokens(t["tokens"], t["count"], t["truncated"]) for t in r.json()["texts"]]

    return [Call("POST", f"{prefix}/tokenize", {"texts": batch}, read=read) for batch in _batches(list(texts))]


def add_documents(prefix: str, documents: Iterable[Document | dict[str, Any] | str]) -> list[Call]:
    bodies = [_document(d) for d in documents]
    return [
        Call("POST", f"{prefix}/documents", {"documents": batch}, read=lambda r: r.json()["ids"])
        for batch in _batches(bodies)
    ]


def get_document(prefix: str, doc_id: str) -> Call:
    def read(r: httpx.Response) -> Document:
        body = r.json()
        return Document(body["text"], body["id"], body["metadata"])

    return Call("GET", f"{prefix}/documents/{quote(doc_id, safe='')}", read=read, missing=None)


def delete_document(prefix: str, doc_id: str) -> Call:
    return Call("DELETE", f"{prefix}/documents/{quote(doc_id, safe='')}", read=lambda r: True, missing=False)


def search(prefix: str, q: str, k: int, **options: Any) -> Call:
    """POST: a filter or feedback object needs no JSON in the URL, and a long query no URL limit."""
    return Call(
        "POST", f"{prefix}/search", {"q": q, "k": k, **_asked(options)}, read=lambda r: SearchResult.from_json(r.json())
    )


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
