"""/collections/{name}/export and /import: a collection moved or backed up as lines of JSON, vectors included."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request
from fastapi.responses import Response, StreamingResponse
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from app.api.access import allow
from app.api.backup_schemas import CollectionLine, ImportBody
from app.api.deps import CollectionName, ServicesDep, open_collection
from app.api.json_input import loads
from app.core.access import EVERY
from app.core.errors import InvalidInput
from app.services.collections.backup import ImportReport, export_lines, import_lines
from app.services.collections.spec import DEFAULT

NDJSON = "application/x-ndjson"


class LinesRoute(APIRoute):
    """A body of JSON lines reaches the route as the JSON array of its lines, checked like any JSON body."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def as_array(request: Request) -> Response:
            lines = [line for line in (await request.body()).splitlines() if line.strip()]
            for n, line in enumerate(lines, 1):  # one JSON object a line: two joined by a comma are not two lines
                if not isinstance(loads(line, f"line {n}"), dict):
                    raise InvalidInput(f"line {n}: one JSON object a line")
            headers = [(k, v) for k, v in request.scope["headers"] if k != b"content-type"]
            converted = Request(
                {**request.scope, "headers": [*headers, (b"content-type", b"application/json")]}, request.receive
            )
            converted._body = b"[" + b",".join(lines) + b"]"
            return await handler(converted)

        return as_array


router = APIRouter(tags=["backups"], route_class=LinesRoute)


@router.get(
    "/collections/{name}/export",
    response_class=StreamingResponse,
    responses={200: {"content": {NDJSON: {"schema": {"type": "string"}}}}},
)
async def export_collection(name: CollectionName, services: ServicesDep) -> StreamingResponse:
    """Settings, the correction served, then every document with its raw vectors, one JSON object a line, streamed
    as read from Redis (writes meanwhile may or may not be in it)."""
    collection = await open_collection(services, name)

    def held() -> Iterator[bytes]:
        with collection.using():
            yield from export_lines(collection)

    disposition = {"Content-Disposition": f"attachment; filename={name}.jsonl"}
    return StreamingResponse(held(), media_type=NDJSON, headers=disposition)


@router.post("/collections/{name}/import")
async def import_collection(
    name: CollectionName,
    request: Request,
    services: ServicesDep,
    lines: Annotated[
        ImportBody,
        Body(media_type=NDJSON, description="An export's lines, or its first lines and some of its documents."),
    ],
) -> ImportReport:
    """The collection is created as exported if new; documents already stored alike are skipped, so an
    interrupted import is resumed by sending it again."""
    if not isinstance(lines[0], CollectionLine):
        raise InvalidInput("an import starts with the export's collection line")
    if name != DEFAULT and services.collections.specs.get(name) is None:  # it creates one: as POST /collections
        allow(request, "write", EVERY, f"creating collection {name!r} by import")
    dumped = [line.model_dump() for line in lines]
    report = await run_in_threadpool(import_lines, services.collections, name, dumped)
    for how in ("from_vectors", "encoded", "skipped"):
        request.app.state.metrics.imported.labels(name, how).inc(getattr(report, how))
    return report
