"""Domain errors, raised where they happen: what went wrong, never how HTTP says it (`app.api.errors` maps them)."""

from __future__ import annotations


class ServiceError(Exception):
    """Base of every error the service raises on purpose; `type` names it in the response body."""

    type = "service_error"

    def __init__(self, message: str, *, retry_after: int | None = None):
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after  # seconds after which a retry will likely do; None: it will not


class InvalidInput(ServiceError):
    type = "invalid_input"


class BadRequest(ServiceError):  # well-formed input asking for what the served space cannot give
    type = "bad_request"


class TooLarge(ServiceError):
    type = "too_large"


class Forbidden(ServiceError):  # a known key whose scope does not cover the route or the collection
    type = "forbidden"


class NotFound(ServiceError):
    type = "not_found"


class Conflict(ServiceError):  # the name is taken
    type = "conflict"


class NotReady(ServiceError):
    """Not serving this yet (starting, or a collection still opening); `retry_after` when a retry will likely do."""

    type = "not_ready"


class RequestTimeout(ServiceError):  # no vectors within CE_REQUEST_TIMEOUT: answered, not left waiting
    type = "timeout"


class Overloaded(ServiceError):
    """The encoding queue is full: shed load now rather than grow memory; the client retries later."""

    type = "overloaded"

    def __init__(self, message: str, *, retry_after: int = 1):
        super().__init__(message, retry_after=retry_after)


class StoreUnavailable(ServiceError):
    type = "store_unavailable"


class ArtifactError(ServiceError):
    """A correction artifact that is corrupt or does not belong to the backbone; refused at load."""

    type = "artifact_error"
