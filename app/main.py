"""create_app(settings): the FastAPI app whose lifespan builds the services once."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from app import __version__
from app.api.access import authorizer
from app.api.deps import hold_collection
from app.api.errors import install_error_handlers
from app.api.metrics import Metrics
from app.api.middleware import ApiKeyMiddleware, BodyLimitMiddleware, RequestContextMiddleware
from app.api.openapi import install_served_schema
from app.api.routes import COLLECTION_ROUTERS, ROUTERS
from app.core import tracing
from app.core.access import ApiKey
from app.core.config import Settings, get_settings
from app.services.container import Services

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, services: Services | None = None) -> FastAPI:
    """Build the app; pass `services` to serve existing ones (tests), else they are built at start-up."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = services is None
        app.state.services = services or await run_in_threadpool(Services.from_settings, settings)
        s = app.state.services
        s.engine.on_round = metrics.observe_round
        log.info(
            "serving %s (%s) with correction %s",
            s.backbone.name,
            s.backbone.pooling,
            s.correction.id if s.correction else None,
        )
        if owned:
            # What start-up built (modules, the model's session, the index) lives until the end: frozen out of
            # the cyclic collector, a collection scans only what requests allocate (it took ~12% of the loop).
            gc.freeze()
        try:
            yield
        finally:
            app.state.services = None
            if owned:
                s.close()
            tracing.flush()

    routes = [route for router in COLLECTION_ROUTERS for route in router.routes]
    default_paths = [route.path for route in routes if isinstance(route, APIRoute)]
    app = FastAPI(
        dependencies=[Depends(authorizer(default_paths))],
        title="Corrected embeddings",
        version=__version__,
        description="Sentence embeddings with an offline-fitted anisotropy correction; similarity and search.",
        lifespan=lifespan,
    )
    metrics = Metrics()
    metrics.watch(lambda: getattr(app.state, "services", None))
    app.state.metrics = metrics
    install_error_handlers(app)
    install_served_schema(app, settings)
    for router in ROUTERS:
        app.include_router(router)
    for router in COLLECTION_ROUTERS:
        app.include_router(router, prefix="/collections/{name}", dependencies=[Depends(hold_collection)])
    app.add_middleware(BodyLimitMiddleware, limit=settings.max_body_bytes)
    app.add_middleware(ApiKeyMiddleware, keys=[ApiKey.model_validate(k) for k in settings.api_keys])
    app.add_middleware(RequestContextMiddleware, metrics=metrics)  # outermost: every answer is counted and tagged
    tracing.install(app)  # off unless OTEL_EXPORTER_OTLP_ENDPOINT is set
    return app
