"""Schemathesis hooks (SCHEMATHESIS_HOOKS=tests.fuzz_surrogates): lone surrogates put into generated JSON bodies.

Schemathesis never generates them itself (they cannot be encoded as UTF-8), yet JSON carries them as `\\ud800`
escapes and a server must answer them with a 4xx. Each body is kept as generated or (one in four) gets a lone
surrogate in some of its strings and keys; every body changed is counted in the file CE_FUZZ_SURROGATES names.
Also the serializer of the one body that is not JSON (an import's lines)."""

from __future__ import annotations

import json
import os

import schemathesis
from hypothesis import strategies as st

LONE = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff"])


@st.composite
def _poisoned(draw, value):
    """`value` with a lone surrogate inserted into some of its strings (dict keys too)."""
    if isinstance(value, str):
        if not draw(st.booleans()):
            return value
        at = draw(st.integers(0, len(value)))
        return value[:at] + draw(LONE) + value[at:]
    if isinstance(value, list):
        return [draw(_poisoned(item)) for item in value]
    if isinstance(value, dict):
        return {draw(_poisoned(k)): draw(_poisoned(v)) for k, v in value.items()}
    return value


def _count(body) -> object:
    counter = os.environ.get("CE_FUZZ_SURROGATES")
    if counter and _has_surrogate(body):
        with open(counter, "a") as f:
            f.write("1\n")
    return body


def _has_surrogate(value) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, list):
        return any(map(_has_surrogate, value))
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    return False


@schemathesis.hook
def flatmap_body(context, body):
    """Three bodies in four as generated, one with surrogates wherever a string is: the refused ones stay a minority
    of each operation's, so a "schema validation mismatch" still means the schema says less than the server checks
    (at one in two, an operation with a collection in its path crossed the warning's threshold on them alone)."""
    return st.integers(0, 3).flatmap(lambda pick: _poisoned(body) if pick == 0 else st.just(body)).map(_count)


@schemathesis.serializer("application/x-ndjson")
def ndjson(context, value) -> bytes:
    """An import's body, published as the array of its lines: each item on a line of its own."""
    items = value if isinstance(value, list) else [value]
    return b"".join(json.dumps(item).encode() + b"\n" for item in items)
