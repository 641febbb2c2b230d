"""The one table from errors to HTTP answers: domain errors, validation errors and unknown routes."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.core import errors
from app.core.errors import ServiceError

log = logging.getLogger(__name__)
STATUS: dict[type[ServiceError], int] = {  # the one place a domain error becomes an HTTP status
    errors.InvalidInput: 422,
    errors.BadRequest: 400,
    errors.TooLarge: 413,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    errors.NotReady: 503,
    errors.RequestTimeout: 504,
    errors.Overloaded: 429,
    errors.StoreUnavailable: 503,
    errors.ArtifactError: 500,
    ServiceError: 500,
}


def status_of(exc: ServiceError) -> int:
    """The HTTP status of a domain error: its own class's, else its nearest base's."""
    return next(STATUS[kind] for kind in type(exc).__mro__ if kind in STATUS)


def headers_of(exc: ServiceError) -> dict[str, str] | None:
    """Retry-After on an error a retry will likely mend."""
    return {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None


def error_body(type_: str, message: str, **extra: Any) -> dict[str, Any]:
    """The one error shape every 4xx/5xx response uses."""
    return {"error": {"type": type_, "message": message, **extra}}


def install_error_handlers(app: FastAPI) -> None:
    """Map domain errors, validation errors and unknown routes to `{"error": {...}}`."""

    @app.exception_handler(ServiceError)
    async def _service_error(_: Request, exc: ServiceError) -> JSONResponse:
        return JSONResponse(error_body(exc.type, exc.message), status_code=status_of(exc), headers=headers_of(exc))

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
