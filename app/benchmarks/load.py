"""`load`: many clients mixing every kind of request for a while; errors, latency and memory over time."""

from __future__ import annotations

import random
import threading
import time
import urllib.parse
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from app.benchmarks.http import Connection, rss_mb
from app.benchmarks.throughput import percentile

ID_POOL = 2000  # writes upsert ids from a fixed pool, so the corpus (and memory) stops growing
OK = {"embed": {200}, "similarity": {200}, "search": {200}, "write": {201}, "delete": {204, 404}}
WEIGHTS = {"embed": 40, "similarity": 20, "search": 30, "write": 8, "delete": 2}


@dataclass
class OpFigures:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    shed: int = 0  # 429: load deliberately refused, with Retry-After

    def summary(self) -> dict[str, Any]:
        lat = self.latencies or [float("nan")]
        return {
            "requests": len(self.latencies),
            "p50_ms": round(percentile(lat, 50) * 1000, 1),
            "p99_ms": round(percentile(lat, 99) * 1000, 1),
            "errors": self.errors,
            "shed_429": self.shed,
        }


def _request(op: str, texts: list[str], rng: random.Random) -> tuple[str, str, dict[str, Any] | None]:
    def pick(n: int) -> list[str]:
        return rng.sample(texts, n)

    if op == "embed":
        return "POST", "/embed", {"texts": pick(rng.randint(1, 4))}
    if op == "similarity":
        return "POST", "/similarity", {"pairs": [pick(2) for _ in range(rng.randint(1, 4))]}
    if op == "search":
        return "GET", "/search?" + urllib.parse.urlencode({"q": pick(1)[0], "k": 10}), None
    if op == "write":
        ids = [f"load-{rng.randrange(ID_POOL)}" for _ in range(4)]
        docs = [{"id": i, "text": t, "metadata": {"n": n}} for n, (i, t) in enumerate(zip(ids, pick(4), strict=True))]
        return "POST", "/documents", {"documents": docs}
    return "DELETE", f"/documents/load-{rng.randrange(ID_POOL)}", None


def run_load(
    url: str, pid: int | None, texts: list[str], *, seconds: float, clients: int, seed: int = 0
) -> dict[str, Any]:
    """`clients` threads on keep-alive connections until `seconds` pass; RSS of `pid` sampled every 2 s."""
    figures: dict[str, OpFigures] = defaultdict(OpFigures)
    lock = threading.Lock()
    start = time.monotonic()
    stop = start + seconds
    ops, weights = list(WEIGHTS), list(WEIGHTS.values())

    def client(n: int) -> None:
        rng = random.Random(seed * 1000 + n)
        conn = Connection(url)
        while time.monotonic() < stop:
            op = rng.choices(ops, weights)[0]
            method, path, body = _request(op, texts, rng)
            began = time.perf_counter()
            status = conn.request(method, path, body)
            elapsed = time.perf_counter() - began
            with lock:
                f = figures[op]
                if status == 429:
                    f.shed += 1
                else:
                    f.latencies.append(elapsed)
                    f.errors += status not in OK[op]
            if status == 429:
                time.sleep(0.05)  # the server said to come back later
        conn.close()

    rss: list[tuple[float, float]] = []

    def sample() -> None:
        while pid is not None and time.monotonic() < stop:
            rss.append((round(time.monotonic() - start, 1), round(rss_mb(pid), 1)))
            time.sleep(2.0)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    threads.append(threading.Thread(target=sample))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    per_op = {op: figures[op].summary() for op in ops}
    result = {
        "seconds": round(elapsed, 1),
        "clients": clients,
        "requests": sum(s["requests"] for s in per_op.values()),
        "errors": sum(s["errors"] for s in per_op.values()),
        "shed_429": sum(s["shed_429"] for s in per_op.values()),
        "per_op": per_op,
        "rss_mb": rss,
    }
    if len(rss) >= 2:
        half = min(rss, key=lambda sample_: abs(sample_[0] - seconds / 2))[1]
        result["rss_growth_second_half"] = round(rss[-1][1] / half - 1, 4)
    return result
