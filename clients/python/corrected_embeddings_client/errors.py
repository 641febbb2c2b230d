"""The server's `{"error": {"type", "message"}}` answers as exceptions, one class per kind a caller handles."""

from __future__ import annotations

import httpx


class ServiceError(Exception):
    """An answer of 4xx or 5xx: the status, the server's error type and message, and the request id to quote."""

    def __init__(self, status: int, type_: str, message: str, request_id: str | None = None):
        super().__init__(f"{status} {type_}: {message}" + (f" (request {request_id})" if request_id else ""))
        self.status = status
        self.type = type_
        self.message = message
        self.request_id = request_id


class InvalidRequest(ServiceError):
    """400, 413 or 422: the request itself is wrong; sending it again will not help."""


class Unauthorized(ServiceError):
    """401: no key, or a key the server does not know."""


class Forbidden(ServiceError):
    """403: the key is known but its scope does not cover this route or collection."""


class NotFound(ServiceError):
    """404: no such document, collection or route."""


class Conflict(ServiceError):
    """409: the collection exists, or is in a state that refuses this."""


class Unavailable(ServiceError):
    """429, 503 or 504 still answered after the retries: the server is busy, loading or starting."""


_BY_STATUS = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: InvalidRequest,
    422: InvalidRequest,
    429: Unavailable,
    503: Unavailable,
    504: Unavailable,
}


def error_from(response: httpx.Response) -> ServiceError:
    """The exception for a failed answer, with the server's own words when it sent its error shape."""
    try:
        error = response.json().get("error", {})
    except ValueError:
        error = {}
    kind = _BY_STATUS.get(response.status_code, ServiceError)
    message = error.get("message") or response.text[:200] or response.reason_phrase
    return kind(response.status_code, error.get("type", "http_error"), message, response.headers.get("x-request-id"))
