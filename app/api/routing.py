"""Routes whose JSON body is checked against the schema's list bound before Python parses it into objects."""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

import ijson  # type: ignore[import-untyped]  # ijson ships no types
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

from app.api.json_input import refused, within_nesting
from app.core.config import MAX_REQUEST_ITEMS

# Smaller bodies cannot hold enough items to matter, and skip the check.
CHECK_BODY_BYTES = 64 * 1024


def holds_a_list_over(body: bytes, limit: int) -> bool:
    """Whether any JSON array in `body` has more than `limit` items: streamed by a C parser, so the answer comes
    after `limit + 1` items, with none of them kept, rather than after the whole body became Python objects."""
    stack: list[int | None] = []  # an item count per open array, None per open object
    try:
        for _, event, _ in ijson.parse(body):
            if event in ("end_array", "end_map"):
                stack.pop()
                continue
            if event == "map_key":
                continue
            if stack and stack[-1] is not None:
                stack[-1] += 1
                if stack[-1] > limit:
                    return True
            if event == "start_array":
                stack.append(0)
            elif event == "start_map":
                stack.append(None)
    except (ijson.JSONError, UnicodeDecodeError):  # malformed, or not UTF-8: FastAPI's own parse says so
        return False
    return False


class BoundedBodyRoute(APIRoute):
    """Without this, a body of a million tiny texts becomes a million Python strings (~80 MB for 8 MB of JSON)
    before the schema's 4,096-item bound refuses it."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        if self.body_field is None:
            return handler

        async def bounded(request: Request) -> Response:
            body = await request.body()  # cached on the request: FastAPI reads the same bytes after
            if len(body) > CHECK_BODY_BYTES and holds_a_list_over(body, MAX_REQUEST_ITEMS):
                message = (
                    f"a list holds more than {MAX_REQUEST_ITEMS} items; at most {MAX_REQUEST_ITEMS} items per list"
                )
                raise RequestValidationError([{"loc": ("body",), "msg": message, "type": "too_long"}])
            if body and "json" in request.headers.get("content-type", "application/json"):
                await parsed_body(request)
            return await handler(request)

        return bounded


async def parsed_body(request: Request) -> None:
    """The JSON body parsed under json_input's limits; Starlette keeps it for FastAPI, which reads it next. A body
    that is not JSON is left for FastAPI to say so."""
    try:
        value = await request.json()
    except json.JSONDecodeError:
        return
    except (RecursionError, ValueError) as exc:
        raise refused(exc, "body") from None
    within_nesting(value, "body")
