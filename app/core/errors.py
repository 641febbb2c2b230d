"""Domain errors raised where they happen, mapped to HTTP in one table."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)


class ServiceError(Exception):
    """Base of every error the service raises on purpose; `type` names it in the response body."""

    type = "service_error"
    status = 500

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    @property
    def headers(self) -> dict[str, str] | None:
        return None


class InvalidInput(ServiceError):
    type, status = "invalid_input", 422


class TooLarge(ServiceError):
    type, status = "too_large", 413


class NotFound(ServiceError):
    type, status = "not_found", 404


class NotReady(ServiceError):
    type, status = "not_ready", 503


class Overloaded(ServiceError):
    """The encoding queue is full: shed load now rather than grow memory; the client retries later."""

    type, status = "overloaded", 429

    def __init__(self, message: str, *, retry_after: int = 1):
        super().__init__(message)
        self.retry_after = retry_after

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


class StoreUnavailable(ServiceError):
    type, status = "store_unavailable", 503


class ArtifactError(ServiceError):
    """A correction artifact that is corrupt or does not belong to the backbone; refused at load."""

    type, status = "artifact_error", 500


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
