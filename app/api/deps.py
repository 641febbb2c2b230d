"""Dependencies: the services the lifespan built, each injected into the routes that need it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from typing import Annotated, cast

from fastapi import Depends, Path, Request
from starlette.concurrency import run_in_threadpool

from app.core.errors import NotReady
from app.services.collections.collection import Collection
from app.services.collections.manager import OPEN_WAIT
from app.services.collections.spec import NAME
from app.services.collections.wiring import CollectionServices
from app.services.container import Services
from app.services.documents import DocumentService
from app.services.embedding import EmbeddingService
from app.services.search import SearchService

NAME_PATTERN = f"^{NAME.pattern}$"


async def get_services(request: Request) -> Services:
    """Async so that FastAPI resolves it on the event loop, not with a hop through its thread pool."""
    services = getattr(request.app.state, "services", None)
    if services is None:
        raise NotReady("the service is starting or stopping")
    return cast(Services, services)  # app.state holds what main.lifespan put there


async def get_collection_services(request: Request) -> CollectionServices:
    """Under /collections/{name}/ the collection `hold_collection` holds, else the default one: the same services."""
    services = getattr(request.state, "collection_services", None)
    return services if services is not None else (await get_services(request)).collections.default.services


# The pattern is published, not checked here: a name that cannot exist is a 404 like one that does not.
CollectionName = Annotated[
    str,
    Path(
        description="The collection's name (`default`: the service's own).", json_schema_extra={"pattern": NAME_PATTERN}
    ),
]


async def hold_collection(request: Request, name: CollectionName) -> AsyncIterator[None]:
    """The routes served again under /collections/{name}/ run on that collection (404 if unknown), held for the
    request so that its backbone is not unloaded meanwhile."""
    collection = await open_collection(await get_services(request), name)
    with collection.using() as services:
        request.state.collection_services = services
        yield


async def open_collection(services: Services, name: str) -> Collection:
    """A collection; opening one (Redis, maybe a backbone to load) runs off the event loop, and past OPEN_WAIT
    the request gets 503 with Retry-After while it goes on opening."""
    opened = services.collections.opened(name)
    if opened is not None:
        return opened
    return await run_in_threadpool(partial(services.collections.get, name, wait=OPEN_WAIT))


async def get_embedding(request: Request) -> EmbeddingService:
    return (await get_collection_services(request)).embedding


async def get_documents(request: Request) -> DocumentService:
    return (await get_collection_services(request)).documents


async def get_search(request: Request) -> SearchService:
    return (await get_collection_services(request)).search


ServicesDep = Annotated[Services, Depends(get_services)]
EmbeddingDep = Annotated[EmbeddingService, Depends(get_embedding)]
DocumentsDep = Annotated[DocumentService, Depends(get_documents)]
SearchDep = Annotated[SearchService, Depends(get_search)]
