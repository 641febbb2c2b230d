"""Operations: the page at /, liveness, readiness, what is served (/info) and Prometheus metrics."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.api.deps import ServicesDep
from app.api.schemas import SCHEMA_BOUNDS
from app.core.errors import NotFound

router = APIRouter()
PAGE = Path(__file__).resolve().parents[1] / "static" / "index.html"


@router.get("/", include_in_schema=False)
def page() -> FileResponse:
    """A page to try the service: search with corrected and raw scores, the correction and its isotropy."""
    return FileResponse(PAGE, media_type="text/html")


# Probes never queue behind sync routes in the shared thread pool (they may all be waiting on the encoder):
# /health runs on the event loop, and /ready's Redis ping has a thread of its own.
_PROBES = ThreadPoolExecutor(1, thread_name_prefix="ready-probe")


@router.get("/health")
async def health() -> dict[str, Any]:
    return {"status": "ok"}


@router.get("/ready")
async def ready(services: ServicesDep) -> JSONResponse:
    loop = asyncio.get_running_loop()
    checks = await loop.run_in_executor(_PROBES, services.readiness)
    ok = all(checks.values())
    # Without Redis the loaded correction still serves /embed and /similarity: degraded, not down. A cluster whose
    # primary fails over still serves reads and searches (from replicas): ready, with its writes refused, and why.
    writes = await loop.run_in_executor(_PROBES, services.writes)
    body = {"ready": ok, "status": "ok" if ok else "degraded", "checks": checks, "writes": writes}
    return JSONResponse(body, status_code=200 if ok else 503)


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """Prometheus text format: requests, latency, encoder rounds, queue depth, the served ids."""
    return Response(generate_latest(request.app.state.metrics.registry), media_type=CONTENT_TYPE_LATEST)


PICTURE = re.compile(r"[a-z0-9_-]{1,80}\.png")  # documents-<a collection's name>.png fits


@router.get("/pictures/{name}", include_in_schema=False)
def picture(name: str, services: ServicesDep) -> FileResponse:
    """A picture `report` or `spaces` drew into CE_DATA_DIR/report (the page shows the collection's first)."""
    path = services.settings.data_dir / "report" / name
    if not PICTURE.fullmatch(name) or not path.is_file():
        raise NotFound(f"no picture {name!r}; `python -m app report` and `spaces` draw them")
    return FileResponse(path, media_type="image/png")


@router.get("/info")
def info(services: ServicesDep) -> dict[str, Any]:
    body = services.info()
    body["limits"].update(SCHEMA_BOUNDS)  # what the request schema itself refuses, whatever the settings
    return body
