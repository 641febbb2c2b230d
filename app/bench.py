"""`bench`: the service over real HTTP against the backbone in-process, on the same machine, in one run."""

from __future__ import annotations

import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

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

    def summary(self, limit: float) -> dict:
        return {
            "sentences_per_s": round(self.per_second, 1),
            "ratio_to_limit": round(self.per_second / limit, 3),
            "p50_ms": round(percentile(self.latencies, 50) * 1000, 2),
            "p99_ms": round(percentile(self.latencies, 99) * 1000, 2),
            "requests": len(self.latencies),
            "errors": self.errors,
        }


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def in_process_limit(encode_with_batch: Callable[[int], Callable], texts: list[str], batch_sizes=(32, 64, 128)):
    """Best sentences/s of the backbone itself over a few batch sizes (length-sorted), and that size."""
    best = (0.0, batch_sizes[0])
    for size in batch_sizes:
        encode = encode_with_batch(size)
        encode(texts[:64])  # warm
        start = time.perf_counter()
        encode(texts)
        best = max(best, (len(texts) / (time.perf_counter() - start), size))
    return best


def single_text_seconds(encode: Callable, repeats: int = 50) -> float:
    """p50 time of encoding one short text in-process."""
    encode([SHORT_TEXT])
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        encode([SHORT_TEXT])
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running_service(env: dict[str, str] | None = None, timeout: float = 180.0):
    """`python -m app serve` as a child process on a free port with its own embedded Redis; yields (url, pid)."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="ce-bench-") as data:
        child_env = {**os.environ, "CE_DATA_DIR": data, "CE_PORT": str(port), "CE_HOST": "127.0.0.1", **(env or {})}
        child_env.pop("REDIS_URL", None)
        child_env.pop("CE_REDIS_URL", None)
        log = Path(data) / "serve.log"
        with log.open("w") as out:
            proc = subprocess.Popen([sys.executable, "-m", "app", "serve"], env=child_env, stdout=out, stderr=out)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"the service exited at start-up:\n{log.read_text()[-2000:]}")
                try:
                    if httpx.get(f"{url}/ready", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("the service did not become ready")
                time.sleep(0.2)
            yield url, proc.pid
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


def _status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb(pid: int) -> float:
    """The process's high-water resident set (VmHWM), in MB."""
    return _status_mb(pid, "VmHWM")


def rss_mb(pid: int) -> float:
    """The process's resident set now (VmRSS), in MB."""
    return _status_mb(pid, "VmRSS")


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


class Connection:
    """A keep-alive HTTP/1.1 connection from the standard library: a load generator should cost the
    machine as little as possible, and httpx costs several times more CPU per request."""

    def __init__(self, url: str):
        parsed = urllib.parse.urlsplit(url)
        self._conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)

    def post_json(self, path: str, body: dict) -> int:
        return self.request("POST", path, body)

    def request(self, method: str, path: str, body: dict | None = None) -> int:
        """Send and read the whole response; the status, or 0 on a connection error."""
        try:
            if body is None:
                self._conn.request(method, path)
            else:
                self._conn.request(method, path, json.dumps(body), {"Content-Type": "application/json"})
            response = self._conn.getresponse()
            response.read()
            return response.status
        except (OSError, http.client.HTTPException):
            self._conn.close()
            return 0

    def close(self) -> None:
        self._conn.close()
