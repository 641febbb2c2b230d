"""`bench`: the service over real HTTP against the backbone in-process, on the same machine, in one run."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.benchmarks.http import Connection

SHORT_TEXT = "A man is playing a guitar."


@dataclass
class LoadResult:
    """Throughput and latency of one load pattern."""

    name: str
    texts: int
    seconds: float
    latencies: list[float]
    errors: int

    @property
    def per_second(self) -> float:
        return self.texts / self.seconds

    def summary(self, limit: float, baseline: float) -> dict[str, Any]:
        return {
            "sentences_per_s": round(self.per_second, 1),
            "ratio_to_limit": round(self.per_second / limit, 3),
            "ratio_to_sentence_transformers": round(self.per_second / baseline, 3),
            "p50_ms": round(percentile(self.latencies, 50) * 1000, 2),
            "p99_ms": round(percentile(self.latencies, 99) * 1000, 2),
            "requests": len(self.latencies),
            "errors": self.errors,
        }


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def batch_setter(backbone: Any) -> Callable[[int], Callable[..., Any]]:
    """For in_process_limit(): the backbone's encode() with its batch size set to the one given."""

    def with_batch(size: int) -> Callable[..., Any]:
        backbone.batch_size = size
        encode: Callable[..., Any] = backbone.encode
        return encode

    return with_batch


def in_process_limit(
    encode_with_batch: Callable[[int], Callable[..., Any]], texts: list[str], batch_sizes: Sequence[int] = (32, 64, 128)
) -> tuple[float, int]:
    """Best sentences/s of the backbone itself over a few batch sizes (length-sorted), and that size."""
    best = (0.0, batch_sizes[0])
    for size in batch_sizes:
        encode = encode_with_batch(size)
        encode(texts[:64])  # warm
        start = time.perf_counter()
        encode(texts)
        best = max(best, (len(texts) / (time.perf_counter() - start), size))
    return best


def sentence_transformers_rate(texts: list[str], batch_size: int = 64) -> float:
    """Sentences/s of sentence-transformers (torch, fp32) encoding the same sentences in its own process:
    what a user compares this service with."""
    from sentence_transformers import SentenceTransformer

    from app.backbones.tokens import default_model_path

    model = SentenceTransformer(str(default_model_path()), device="cpu")
    model.encode(texts[:64], batch_size=batch_size)  # warm
    start = time.perf_counter()
    model.encode(texts, batch_size=batch_size)
    return len(texts) / (time.perf_counter() - start)


def single_text_seconds(encode: Callable[..., Any], repeats: int = 50) -> float:
    """p50 time of encoding one short text in-process."""
    encode([SHORT_TEXT])
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        encode([SHORT_TEXT])
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def http_load(url: str, texts: list[str], *, clients: int, per_request: int, name: str) -> LoadResult:
    """`clients` threads, each with a keep-alive connection, POST /embed until every text has been sent once."""
    chunks = [texts[i : i + per_request] for i in range(0, len(texts), per_request)]
    lock = threading.Lock()
    latencies: list[float] = []
    errors = [0]
    position = [0]

    def worker() -> None:
        client = Connection(url)
        while True:
            with lock:
                if position[0] >= len(chunks):
                    client.close()
                    return
                chunk = chunks[position[0]]
                position[0] += 1
            start = time.perf_counter()
            ok = client.post_json("/embed", {"texts": chunk}) == 200
            elapsed = time.perf_counter() - start
            with lock:
                latencies.append(elapsed)
                errors[0] += not ok

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return LoadResult(name, len(texts), time.perf_counter() - start, latencies, errors[0])


def single_client_latency(url: str, repeats: int = 100) -> list[float]:
    """One client, one short text per request, one request at a time."""
    times = []
    client = Connection(url)
    for i in range(repeats + 5):
        start = time.perf_counter()
        if client.post_json("/embed", {"texts": [SHORT_TEXT]}) != 200:
            raise RuntimeError("the service answered /embed with an error")
        if i >= 5:  # the first few open the connection and warm the path
            times.append(time.perf_counter() - start)
    client.close()
    return times


def single_client_latency_beside(url: str, texts: list[str], *, clients: int = 32, repeats: int = 100) -> list[float]:
    """single_client_latency() while `clients` others send 8 texts over the token limit with truncate false:
    requests the service must tokenize, whole, to refuse. What it costs the event loop shows here."""
    body = {"texts": texts[:8], "truncate": False}
    done = threading.Event()

    def refused() -> None:
        client = Connection(url)
        while not done.is_set():
            client.post_json("/embed", body)
        client.close()

    load = [threading.Thread(target=refused) for _ in range(clients)]
    for t in load:
        t.start()
    try:
        time.sleep(1.0)  # the load is under way
        return single_client_latency(url, repeats)
    finally:
        done.set()
        for t in load:
            t.join()


INT8_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")  # what int8 matrix products can use


def cpu() -> dict[str, Any]:
    """The CPU the figures were measured on: its model and the int8 instruction sets it has (VNNI makes int8 fast)."""
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").is_file() else ""
    model = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")), "?")
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return {"model": model, "int8_instructions": [f for f in INT8_FLAGS if f in flags]}
