"""How large a document's metadata may be, wherever it is written (a body, an import line, a merge into what is
stored): its keys, its nesting and its size as JSON. One rule, so that no write path holds metadata another refuses."""

from __future__ import annotations

import json
from typing import Any

MAX_METADATA_KEYS, MAX_METADATA_DEPTH, MAX_METADATA_BYTES = 64, 4, 16_384


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def metadata_fault(value: dict[str, Any]) -> str | None:
    """Why this metadata is over a limit, or None."""
    if len(value) > MAX_METADATA_KEYS:
        return f"metadata has {len(value)} keys, at most {MAX_METADATA_KEYS}"
    if (levels := depth(value)) > MAX_METADATA_DEPTH:
        return f"metadata nests {levels} deep, at most {MAX_METADATA_DEPTH}"
    size = len(json.dumps(value, ensure_ascii=False).encode())
    if size > MAX_METADATA_BYTES:
        return f"metadata is {size} bytes as JSON, at most {MAX_METADATA_BYTES}"
    return None
