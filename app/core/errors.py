"""Domain errors, raised where they happen; each carries its HTTP status, which `app.api.errors` maps."""

from __future__ import annotations


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


class BadRequest(ServiceError):  # well-formed input asking for what the served space cannot give
    type, status = "bad_request", 400


class TooLarge(ServiceError):
    type, status = "too_large", 413


class Forbidden(ServiceError):  # a known key whose scope does not cover the route or the collection
    type, status = "forbidden", 403


class NotFound(ServiceError):
    type, status = "not_found", 404


class Conflict(ServiceError):  # the name is taken
    type, status = "conflict", 409


class NotReady(ServiceError):
    """Not serving this yet (starting, or a collection still opening); Retry-After when a retry will likely do."""

    type, status = "not_ready", 503

    def __init__(self, message: str, *, retry_after: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after

    @property
    def headers(self) -> dict[str, str] | None:
        return {"Retry-After": str(self.retry_after)} if self.retry_after is not None else None


class RequestTimeout(ServiceError):  # no vectors within CE_REQUEST_TIMEOUT: answered, not left waiting
    type, status = "timeout", 504


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
