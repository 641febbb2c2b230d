"""Dependencies: the one service object the lifespan built, injected into every route."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.core.errors import NotReady
from app.service import EmbeddingService


def get_service(request: Request) -> EmbeddingService:
    service = getattr(request.app.state, "service", None)
    if service is None:
        raise NotReady("the service is starting or stopping")
    return service


ServiceDep = Annotated[EmbeddingService, Depends(get_service)]
