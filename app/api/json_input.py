"""JSON as requests send it, read under the limits Python's reader lacks: how deep it nests (the reader, the schema
and every walk over a value recurse, so ~1,000 levels would end in a RecursionError) and how long an integer is
(past 4,300 digits Python raises a ValueError that is no JSON error). Bodies, JSON in a URL and import lines alike."""

from __future__ import annotations

import json
import sys
from typing import Any

from app.core.errors import InvalidInput

MAX_NESTING = 64  # objects and arrays inside one another: far past any filter's (8) or metadata's (4) own bound


def nesting(value: Any) -> int:
    """How many objects and arrays nest at the deepest point (0 for a scalar), walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        inner = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if inner is None:
            continue
        deepest = max(deepest, level)
        if level <= MAX_NESTING:  # deeper than the bound: refused whatever lies below
            stack.extend((child, level + 1) for child in inner)
    return deepest


def within_nesting(value: Any, what: str) -> Any:
    if nesting(value) > MAX_NESTING:
        raise InvalidInput(f"{what}: JSON nests more than {MAX_NESTING} levels deep")
    return value


def refused(exc: RecursionError | ValueError, what: str) -> InvalidInput:
    """The 422 for what Python's JSON reader raised: too deep, not JSON, or an integer too long."""
    if isinstance(exc, RecursionError):
        return InvalidInput(f"{what}: JSON nests more than {MAX_NESTING} levels deep")
    if isinstance(exc, json.JSONDecodeError):
        return InvalidInput(f"{what} is not JSON ({exc})")
    digits = sys.get_int_max_str_digits()  # int() past it raises a plain ValueError
    return InvalidInput(f"{what}: an integer of more than {digits} digits; numbers are at most {digits}")


def loads(raw: str | bytes, what: str) -> Any:
    """A JSON text's value, or a 422 that names the limit it broke."""
    try:
        value = json.loads(raw)
    except (RecursionError, ValueError) as exc:
        raise refused(exc, what) from None
    return within_nesting(value, what)
