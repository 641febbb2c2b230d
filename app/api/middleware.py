"""What runs around every route: the API key, the size of the body, and the request id with its metrics."""

from __future__ import annotations

import hmac
import re
import time
import uuid
from collections.abc import Sequence

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.errors import error_body
from app.api.metrics import Metrics
from app.core.access import ApiKey
from app.core.tracing import tag_request
from app.engine.encoder import UNDER_REQUEST

REQUEST_ID = "x-request-id"
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")  # a caller's id is echoed only if it cannot inject anything
# Liveness probes carry no credentials; the page is static (its calls send the key the user types).
OPEN_PATHS = frozenset({"/health", "/"})


class ApiKeyMiddleware:
    """With keys configured, every path but /health needs `Authorization: Bearer <key>`; the key found is left in
    the request's state, for the routes' authorization (`app.api.access`)."""

    def __init__(self, app: ASGIApp, keys: Sequence[ApiKey]):
        self.app = app
        self.keys = [(k.key.get_secret_value().encode(), k) for k in keys]

    def _key(self, scope: Scope) -> ApiKey | None:
        header = dict(scope["headers"]).get(b"authorization", b"")
        scheme, _, token = header.partition(b" ")
        # Compare against every key, whichever matches: the time taken says nothing about which is close.
        matches = [key for secret, key in self.keys if hmac.compare_digest(token.strip(), secret)]
        return matches[0] if scheme.lower() == b"bearer" and matches else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.keys or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        key = self._key(scope)
        if key is not None:
            scope.setdefault("state", {})["api_key"] = key
            await self.app(scope, receive, send)
            return
        body = error_body("unauthorized", "missing or invalid API key: send `Authorization: Bearer <key>`")
        await JSONResponse(body, status_code=401, headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)


class BodyLimitMiddleware:
    """413 for a body over `limit` bytes, by its Content-Length or, when chunked, as it arrives."""

    def __init__(self, app: ASGIApp, limit: int):
        self.app = app
        self.limit = limit

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = error_body("too_large", f"request body over {self.limit} bytes (CE_MAX_BODY_BYTES)")
        await JSONResponse(body, status_code=413)(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None:
            if not length.isdigit() or int(length) > self.limit:
                await self._too_large(scope, receive, send)
                return
            await self.app(scope, receive, send)  # the server enforces the declared length
            return
        messages: list[Message] = []
        size = 0
        while True:  # chunked: read up to the limit before the route sees any of it
            message = await receive()
            messages.append(message)
            size += len(message.get("body", b""))
            if size > self.limit:
                await self._too_large(scope, receive, send)
                return
            if message["type"] != "http.request" or not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


class RequestContextMiddleware:
    """Gives every response an X-Request-ID (the caller's if it is safe, else a new one) and records metrics."""

    def __init__(self, app: ASGIApp, metrics: Metrics):
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        offered = dict(scope["headers"]).get(REQUEST_ID.encode(), b"").decode("latin-1")
        request_id = offered if _SAFE_ID.match(offered) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        tag_request(request_id)
        UNDER_REQUEST.set(True)  # its encoding is held to CE_REQUEST_TIMEOUT; work that serves no request is not
        status = [500]
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (REQUEST_ID.encode(), request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", "unmatched")  # the template, so ids in paths do not explode labels
            method = scope["method"]
            self.metrics.requests.labels(path, method, str(status[0])).inc()
            self.metrics.latency.labels(path, method).observe(time.perf_counter() - started)
