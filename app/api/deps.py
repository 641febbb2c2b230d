"""Dependencies: the services the lifespan built, each injected into the routes that need it."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.core.errors import NotReady
from app.services.container import Services
from app.services.documents import DocumentService
from app.services.embedding import EmbeddingService
from app.services.search import SearchService


async def get_services(request: Request) -> Services:
    """Async so that FastAPI resolves it on the event loop, not with a hop through its thread pool."""
    services = getattr(request.app.state, "services", None)
    if services is None:
        raise NotReady("the service is starting or stopping")
    return services


async def get_embedding(request: Request) -> EmbeddingService:
    return (await get_services(request)).embedding


async def get_documents(request: Request) -> DocumentService:
    return (await get_services(request)).documents


async def get_search(request: Request) -> SearchService:
    return (await get_services(request)).search


ServicesDep = Annotated[Services, Depends(get_services)]
EmbeddingDep = Annotated[EmbeddingService, Depends(get_embedding)]
DocumentsDep = Annotated[DocumentService, Depends(get_documents)]
SearchDep = Annotated[SearchService, Depends(get_search)]
