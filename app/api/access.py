"""Authorization, after the middleware authenticated: a key's scope against the route and every collection the
request names, in its path or in its body."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Iterator
from typing import Any

from fastapi import Request

from app.api.deps import NAME_PATTERN
from app.core.access import EVERY, ApiKey, Scope
from app.core.errors import Forbidden
from app.services.collections.spec import DEFAULT

# POST routes that only read: they compute from the text sent, search, or get and count documents by a body too long
# for a URL; every other POST, PUT and DELETE writes.
READ_POSTS = ("/embed", "/similarity", "/search", "/tokenize", "/v1/embeddings", "/documents/get", "/documents/count")
# Routes that act on no collection by their path: probes, the page, lists filtered for the key, and the route whose
# body names its collection. Every other route outside /collections/{name} and the default's acts on every
# collection (creating one, /info, /metrics, the pictures): a key limited to some is refused it, a new route too.
NO_COLLECTION = frozenset(
    {("GET", "/"), ("GET", "/health"), ("GET", "/ready"), ("GET", "/collections"), ("GET", "/v1/models")}
    | {("POST", "/v1/embeddings")}
)


def needed_scope(method: str, route_path: str) -> Scope:
    return "read" if method in ("GET", "HEAD") or route_path.endswith(READ_POSTS) else "write"


def requester(request: Request) -> ApiKey | None:
    """The key this request came with; None when the service runs without keys."""
    return getattr(request.state, "api_key", None)


def allow(request: Request, needs: Scope, collection: str | None, what: str) -> None:
    """403 unless the request's key may do `what` on `collection` (EVERY: on all): for what a route learns only
    once it runs, such as an import that would create its collection."""
    key = requester(request)
    refusal = key.refusal(needs, collection, what) if key is not None else None
    if refusal:
        raise Forbidden(refusal)


def naming_fields(openapi: dict[str, Any]) -> dict[tuple[str, str], tuple[str, ...]]:
    """Per operation, its JSON body's fields that name a collection: those whose published schema takes a
    collection's name (NAME_PATTERN), as `model` on /v1/embeddings does. Read from the schema, so a field added
    later is covered as it is published."""
    schemas = openapi.get("components", {}).get("schemas", {})
    found = {}
    for path, operations in openapi["paths"].items():
        for method, operation in operations.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            body = schemas.get(body.get("$ref", "").rsplit("/", 1)[-1], body)
            fields = tuple(k for k, v in body.get("properties", {}).items() if NAME_PATTERN in _patterns(v))
            if fields:
                found[(method.upper(), path)] = fields
    return found


def _patterns(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        if isinstance(schema.get("pattern"), str):
            yield schema["pattern"]
        for value in schema.values():
            yield from _patterns(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _patterns(value)


async def named_in_body(request: Request, fields: tuple[str, ...]) -> list[str]:
    """The collections a JSON body names in `fields`; the served model's own id names the default collection."""
    if not fields:
        return []  # the body is not read: most routes name their collection in the path
    try:
        body = await request.json()
    except ValueError:
        return []  # not JSON: the route refuses it (422) and names nothing
    services = getattr(request.app.state, "services", None)
    model = services.backbone.name if services is not None else None
    values = [body.get(f) for f in fields] if isinstance(body, dict) else []
    return [DEFAULT if v == model else v for v in values if isinstance(v, str)]


def route_template(request: Request) -> str:
    """The route's path as the schema publishes it: the default collection's routes are mounted again under
    /collections/{name}, where the route itself knows only its own part."""
    path = str(request.scope["route"].path)
    if "name" in request.path_params and request.url.path.startswith("/collections/"):
        return path if path.startswith("/collections/{name}") else "/collections/{name}" + path
    return path


def authorizer(default_paths: Iterable[str]) -> Callable[[Request], Coroutine[Any, Any, None]]:
    """The app-wide dependency; `default_paths` are the routes served at the root for the default collection."""
    on_default = frozenset(default_paths)
    # (method, path) -> the body fields naming a collection, read from the published schema at the first keyed request
    fields: list[dict[tuple[str, str], tuple[str, ...]]] = []

    async def authorize(request: Request) -> None:
        key = requester(request)
        if key is None:
            return
        path, method = route_template(request), request.method
        if path.startswith("/collections/{name}"):  # the collection and every route under it
            collection: str | None = request.path_params["name"]
        elif path in on_default:
            collection = DEFAULT
        else:
            collection = None if (method, path) in NO_COLLECTION else EVERY
        if not fields:
            fields.append(naming_fields(request.app.openapi()))
        named = await named_in_body(request, fields[0].get((method, path), ()))
        what = f"{method} {request.url.path}"
        needs = needed_scope(method, path)
        for name in [collection, *named]:
            refusal = key.refusal(needs, name, what)
            if refusal:
                raise Forbidden(refusal)

    return authorize
