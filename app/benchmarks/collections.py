"""Memory of collections in one process: one, a second on the same backbone (shared weights), a third on
another pooling (another exported graph)."""

from __future__ import annotations

import time
from typing import Any

from app.benchmarks.http import Connection, rss_mb

SETTLE_S = 2.0  # let allocations from the last requests settle before reading the resident set


def _fill(conn: Connection, prefix: str, texts: list[str], batch: int = 100) -> None:
    for start in range(0, len(texts), batch):
        docs = [{"id": f"d{i}", "text": texts[i]} for i in range(start, min(start + batch, len(texts)))]
        status = conn.post_json(f"{prefix}/documents", {"documents": docs})
        if status != 201:
            raise RuntimeError(f"POST {prefix}/documents answered {status}")
    for text in texts[:50]:
        conn.request("GET", f"{prefix}/search?k=10&q={text[:40].replace(' ', '+').replace('&', '')}")


def run_collections(url: str, pid: int, texts: list[str], *, other_pooling: str = "cls") -> dict[str, Any]:
    """RSS (MB) after filling the default collection, a second on its backbone, a third on `other_pooling`."""
    conn = Connection(url)
    try:
        steps = {}
        _fill(conn, "", texts)
        time.sleep(SETTLE_S)
        steps["one_collection_mb"] = rss_mb(pid)
        others = {
            "two_sharing_one_backbone_mb": {"name": "second"},
            f"plus_one_on_{other_pooling}_mb": {"name": "third", "pooling": other_pooling},
        }
        for name, body in others.items():
            if conn.post_json("/collections", body) != 201:
                raise RuntimeError(f"POST /collections {body} failed")
            _fill(conn, f"/collections/{body['name']}", texts)
            time.sleep(SETTLE_S)
            steps[name] = rss_mb(pid)
    finally:
        conn.close()
    one = steps.pop("one_collection_mb")
    return {
        "documents_each": len(texts),
        "one_collection_mb": round(one),
        **{k: round(v) for k, v in steps.items()},
        **{k.removesuffix("_mb") + "_ratio": round(v / one, 3) for k, v in steps.items()},
    }
