"""The one table from errors to HTTP answers: domain errors, validation errors and unknown routes."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.core.errors import ServiceError

log = logging.getLogger(__name__)


def error_body(type_: str, message: str, **extra) -> dict:
    """The one error shape every 4xx/5xx response uses."""
    return {"error": {"type": type_, "message": message, **extra}}


def install_error_handlers(app: FastAPI) -> None:
    """Map domain errors, validation errors and unknown routes to `{"error": {...}}`."""

    @app.exception_handler(ServiceError)
    async def _service_error(_: Request, exc: ServiceError) -> JSONResponse:
        return JSONResponse(error_body(exc.type, exc.message), status_code=exc.status, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        details = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")} for e in exc.errors()
        ]
        message = "; ".join(f"{'.'.join(map(str, d['loc']))}: {d['msg']}" for d in details) or "invalid request"
        return JSONResponse(error_body("validation_error", message, details=details), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(error_body("http_error", str(exc.detail)), status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error (request %s)", getattr(request.state, "request_id", "?"), exc_info=exc)
        return JSONResponse(error_body("internal_error", "internal server error"), status_code=500)
