"""`bench-fairness`: what one huge request costs everybody else. The documented maximum body is refused at once or
finished within the deadline; while the largest allowed one runs, a short /embed still answers, fast; after a 504 the
request's remaining texts are never encoded; memory comes back."""

from __future__ import annotations

import json
import random
import re
import threading
import time
import urllib.error
import urllib.request
from typing import Any

from app.benchmarks.http import Connection, rss_mb
from app.benchmarks.throughput import percentile

PROBE = {"texts": ["a short sentence that another client wants embedded"]}
PROBE_GAP = 0.05  # seconds between the probe client's requests


def long_documents(n: int, chars: int, words: list[str], seed: int) -> list[dict[str, Any]]:
    """`n` documents of `chars` characters drawn from `words`: distinct texts, so no cache or dedupe helps."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        text = " ".join(rng.choices(words, k=chars // 4))[:chars]
        docs.append({"id": f"long-{seed}-{i}", "text": text})
    return docs


def _get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=30) as response:
        answer: dict[str, Any] = json.load(response)
        return answer


def encoder_counts(url: str) -> dict[str, float]:
    """The encoder's texts encoded and texts dropped (never encoded: their request timed out), from /metrics."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=30) as response:
        lines = response.read().decode().splitlines()
    wanted = {"ce_encoder_texts_encoded_total": "encoded", "ce_encoder_texts_dropped_total": "dropped"}
    return {
        wanted[name]: float(value)
        for name, value in (ln.split()[:2] for ln in lines if ln.split()[:1] and ln.split()[0] in wanted)
    }


def timed_post(url: str, path: str, body: dict[str, Any]) -> tuple[int, float]:
    conn = Connection(url)
    began = time.perf_counter()
    status = conn.post_json(path, body)
    conn.close()
    return status, round(time.perf_counter() - began, 2)


def probe_while(url: str, busy: threading.Event | None, count: int = 0) -> dict[str, Any]:
    """One client's short /embed, one after another: while `busy` is set, or `count` times; p50/p99 and 429s."""
    conn, latencies, statuses = Connection(url), list[float](), list[int]()
    while (busy is not None and busy.is_set()) or len(statuses) < count:
        began = time.perf_counter()
        statuses.append(conn.post_json("/embed", PROBE))
        latencies.append(time.perf_counter() - began)
        time.sleep(PROBE_GAP)
    conn.close()
    return {
        "requests": len(statuses),
        "p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "max_ms": round(max(latencies) * 1000, 1),
        "shed_429": statuses.count(429),
        "errors": sum(s not in (200, 429) for s in statuses),
    }


def maximum_body(url: str, docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The documented maximum POST /documents: its status, how long the answer took, the tokens the server counted."""
    request = urllib.request.Request(
        f"{url}/documents", json.dumps({"documents": docs}).encode(), {"Content-Type": "application/json"}
    )
    began = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            status, body = response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read().decode()
    seconds = round(time.perf_counter() - began, 2)
    counted = re.search(r"([\d,]+) tokens to encode", body)
    return {"status": status, "seconds": seconds, "tokens": int(counted[1].replace(",", "")) if counted else None}


def largest_allowed(url: str, docs: list[dict[str, Any]], tokens: int) -> list[dict[str, Any]]:
    """As many of `docs` as one request may carry under the token budget (/info), given what all of them count."""
    budget = _get_json(f"{url}/info")["limits"]["max_request_tokens"]
    return docs[: max(1, int(0.95 * budget * len(docs) / tokens))]


def beside_large_requests(url: str, pid: int, docs: list[dict[str, Any]], clients: int) -> dict[str, Any]:
    """`clients` large allowed requests at once, and the probe client beside them until they are answered."""
    quiet = probe_while(url, None, count=40)
    rss_before = rss_mb(pid)
    busy = threading.Event()
    busy.set()
    answers: list[tuple[int, float]] = []

    def large(n: int) -> None:
        mark = f"client {n} "  # each client's texts its own, as long as the originals
        batch = [{"id": f"{d['id']}-c{n}", "text": mark + d["text"][len(mark) :]} for d in docs]
        answers.append(timed_post(url, "/documents", {"documents": batch}))

    threads = [threading.Thread(target=large, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()

    def wait_then_clear() -> None:
        for t in threads:
            t.join()
        busy.clear()

    waiter = threading.Thread(target=wait_then_clear)
    waiter.start()
    beside = probe_while(url, busy)
    waiter.join()
    rss_peak = rss_mb(pid)
    time.sleep(5)
    return {
        "documents_per_request": len(docs),
        "large_requests": [{"status": s, "seconds": t} for s, t in answers],
        "probe_quiet": quiet,
        "probe_beside": beside,
        "p99_ratio": round(beside["p99_ms"] / quiet["p99_ms"], 1),
        "rss_mb": {"before": round(rss_before), "after": round(rss_peak), "5s_later": round(rss_mb(pid))},
    }


def after_deadline(url: str, docs: list[dict[str, Any]], settle: float = 5.0) -> dict[str, Any]:
    """A large request that outlives its deadline: its 504, and the texts encoded after it (only the round under
    way when the deadline passed may finish) and dropped."""
    before = encoder_counts(url)
    status, seconds = timed_post(url, "/documents", {"documents": docs})
    at_504 = encoder_counts(url)
    time.sleep(settle)
    later = encoder_counts(url)
    return {
        "status": status,
        "seconds": seconds,
        "encoded_before_504": int(at_504["encoded"] - before["encoded"]),
        f"encoded_in_{settle:g}s_after": int(later["encoded"] - at_504["encoded"]),
        "dropped": int(later["dropped"] - before["dropped"]),
    }
