"""Dependencies: the services the lifespan built, each injected into the routes that need it."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Request
from starlette.concurrency import run_in_threadpool

from app.core.errors import NotReady
from app.services.container import Services
from app.services.documents import DocumentService
from app.services.embedding import EmbeddingService
from app.services.search import SearchService
from app.services.spaces import SpaceServices


async def get_services(request: Request) -> Services:
    """Async so that FastAPI resolves it on the event loop, not with a hop through its thread pool."""
    services = getattr(request.app.state, "services", None)
    if services is None:
        raise NotReady("the service is starting or stopping")
    return services


async def get_space(request: Request) -> Services | SpaceServices:
    """The default collection's services, or under /collections/{name}/ that collection's (404 if unknown)."""
    services = await get_services(request)
    name = request.path_params.get("name")
    return services if name is None else await collection_services(services, name)


async def collection_services(services: Services, name: str) -> SpaceServices:
    """A collection's services; opening one (Redis, maybe a backbone to load) runs off the event loop."""
    collection = services.collections.opened(name) or await run_in_threadpool(services.collections.get, name)
    return collection.services


async def collection_name(name: Annotated[str, Path(description="The collection's name.")]) -> str:
    """Declares {name} for the routes served again under /collections/{name}/ (and in their OpenAPI)."""
    return name


async def get_embedding(request: Request) -> EmbeddingService:
    return (await get_space(request)).embedding


async def get_documents(request: Request) -> DocumentService:
    return (await get_space(request)).documents


async def get_search(request: Request) -> SearchService:
    return (await get_space(request)).search


ServicesDep = Annotated[Services, Depends(get_services)]
EmbeddingDep = Annotated[EmbeddingService, Depends(get_embedding)]
DocumentsDep = Annotated[DocumentService, Depends(get_documents)]
SearchDep = Annotated[SearchService, Depends(get_search)]
