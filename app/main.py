"""create_app(settings): the FastAPI app whose lifespan builds the one service object."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

from app import __version__
from app.api.middleware import ApiKeyMiddleware, BodyLimitMiddleware
from app.api.observability import Metrics, RequestContextMiddleware
from app.api.openai_compat import router as openai_router
from app.api.routes import router
from app.core.errors import install_error_handlers
from app.core.settings import Settings, get_settings
from app.service import EmbeddingService

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, service: EmbeddingService | None = None) -> FastAPI:
    """Build the app; pass `service` to serve an existing one (tests), else it is built at start-up."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = service is None
        app.state.service = service or await run_in_threadpool(EmbeddingService.from_settings, settings)
        s = app.state.service
        s.engine.on_round = metrics.observe_round
        log.info(
            "serving %s (%s) with correction %s",
            s.backbone.name,
            s.backbone.pooling,
            s.correction.id if s.correction else None,
        )
        try:
            yield
        finally:
            app.state.service = None
            if owned:
                s.close()

    app = FastAPI(
        title="Corrected embeddings",
        version=__version__,
        description="Sentence embeddings with an offline-fitted anisotropy correction; similarity and search.",
        lifespan=lifespan,
    )
    metrics = Metrics()
    metrics.watch(lambda: getattr(app.state, "service", None))
    app.state.metrics = metrics
    install_error_handlers(app)
    app.include_router(router)
    app.include_router(openai_router)
    app.add_middleware(BodyLimitMiddleware, limit=settings.max_body_bytes)
    app.add_middleware(ApiKeyMiddleware, keys=[k.get_secret_value() for k in settings.api_keys])
    app.add_middleware(RequestContextMiddleware, metrics=metrics)  # outermost: every answer is counted and tagged
    return app
