"""`bench-shards`' measures: each query timed alone with its top ids, and p50/p99 in milliseconds."""

from __future__ import annotations

import numpy as np

from app.benchmarks.shards import latency, timed


def test_each_query_is_timed_alone_and_its_ids_kept():
    queries = np.eye(3, dtype=np.float32)
    seconds, found = timed(lambda q: [(f"d{int(np.argmax(q))}", 1.0)], queries)
    assert found == [["d0"], ["d1"], ["d2"]] and len(seconds) == 3 and all(s >= 0 for s in seconds)
    assert latency([0.001, 0.002, 0.003]) == {"p50_ms": 2.0, "p99_ms": 3.0}
