"""/collections/{name}/export and /import: a collection moved or backed up as lines of JSON, vectors included."""

from __future__ import annotations

import json
from dataclasses import asdict

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from app.api.deps import CollectionName, ServicesDep, open_collection
from app.core.errors import InvalidInput
from app.services.collections.backup import export_lines, import_lines

router = APIRouter(tags=["backups"])
NDJSON = "application/x-ndjson"
LINES_SCHEMA = {
    "content": {NDJSON: {"schema": {"type": "string", "description": "Lines of JSON, as /export writes them."}}},
    "required": True,
}


@router.get(
    "/collections/{name}/export",
    response_class=StreamingResponse,
    responses={200: {"content": {NDJSON: {"schema": {"type": "string"}}}}},
)
async def export_collection(name: CollectionName, services: ServicesDep) -> StreamingResponse:
    """Settings, the correction served, then every document with its raw vectors, one JSON object a line, streamed
    as read from Redis (writes meanwhile may or may not be in it)."""
    collection = await open_collection(services, name)

    def held():
        with collection.using():
            yield from export_lines(collection)

    filename = f"{name}.jsonl"
    return StreamingResponse(
        held(), media_type=NDJSON, headers={"Content-Disposition": f"attachment; filename={filename}"}
    )


@router.post("/collections/{name}/import", openapi_extra={"requestBody": LINES_SCHEMA})
async def import_collection(name: CollectionName, request: Request, services: ServicesDep) -> dict:
    """An export's lines, or a part of them after its collection line: the collection is created as exported if
    new; documents already stored alike are skipped, so an interrupted import is resumed by sending it again."""
    body = await request.body()
    try:
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"the body is not lines of JSON ({exc})") from None
    if not all(isinstance(line, dict) for line in lines):
        raise InvalidInput("every line must be a JSON object")
    report = await run_in_threadpool(import_lines, services.collections, name, lines)
    for how in ("from_vectors", "encoded", "skipped"):
        request.app.state.metrics.imported.labels(name, how).inc(getattr(report, how))
    return asdict(report)
