"""Dependencies: the one service object the lifespan built, injected into every route."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.core.errors import NotReady
from app.service import EmbeddingService


async def get_service(request: Request) -> EmbeddingService:
    """Async so that FastAPI resolves it on the event loop, not with a hop through its thread pool."""
    service = getattr(request.app.state, "service", None)
    if service is None:
        raise NotReady("the service is starting or stopping")
    return service


ServiceDep = Annotated[EmbeddingService, Depends(get_service)]
