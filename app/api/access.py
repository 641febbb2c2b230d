"""Authorization, after the middleware authenticated: a key's scope against the route and the collection it acts on."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from fastapi import Request

from app.core.access import ApiKey, Scope
from app.core.errors import Forbidden
from app.services.collections.spec import DEFAULT

# POST routes that only read: they compute from the text sent, or search; every other POST, PUT and DELETE writes.
READ_POSTS = ("/embed", "/similarity", "/search", "/tokenize", "/v1/embeddings")


def needed_scope(method: str, route_path: str) -> Scope:
    return "read" if method in ("GET", "HEAD") or route_path.endswith(READ_POSTS) else "write"


def requester(request: Request) -> ApiKey | None:
    """The key this request came with; None when the service runs without keys."""
    return getattr(request.state, "api_key", None)


def authorizer(default_paths: Iterable[str]) -> Callable[[Request], Coroutine[Any, Any, None]]:
    """The app-wide dependency; `default_paths` are the routes served at the root for the default collection."""
    on_default = frozenset(default_paths)

    async def authorize(request: Request) -> None:
        key = requester(request)
        if key is None:
            return
        path = request.scope["route"].path  # the route's own template: /search also under /collections/{name}/
        if "name" in request.path_params:  # /collections/{name} and every route under it
            collection = request.path_params["name"]
        else:
            collection = DEFAULT if path in on_default else None
        what = f"{request.method} {request.url.path}"
        refusal = key.refusal(needed_scope(request.method, path), collection, what)
        if refusal:
            raise Forbidden(refusal)

    return authorize
