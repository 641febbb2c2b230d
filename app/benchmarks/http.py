"""Talking to a service under measurement: started as a child process, keep-alive connections, its memory."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from app.core.process_memory import status_bytes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_service(
    env: dict[str, str], url: str, log: IO[bytes], *, cwd: Path | None = None, timeout: float = 180.0
) -> subprocess.Popen[bytes]:
    """`python -m app serve` in a child process (stderr to `log`), returned once GET /ready answers 200."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "serve"], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=log
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"the service exited at start-up:\n{log.read()[-2000:].decode(errors='replace')}")
        if _ready(url, json.loads(env.get("CE_API_KEYS") or "[null]")[0]):
            return proc
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"the service did not become ready within {timeout:.0f} s")


def _ready(url: str, api_key: str | None = None) -> bool:
    """Whether GET /ready answers 200 (the standard library's client: benchmarks install no HTTP library); with
    keys configured /ready wants one, as every route but /health does."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(f"{url}/ready", headers=headers), timeout=1) as response:
            return bool(response.status == 200)
    except OSError:  # refused while starting, or an HTTP error status such as 503
        return False


def stop_service(proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """SIGTERM (a graceful shutdown: queued work, last snapshot), then a kill if it takes too long."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def running_service(
    env: dict[str, str] | None = None, timeout: float = 180.0, *, reuse: Iterable[Path] = ()
) -> Iterator[tuple[str, int]]:
    """The service on a free port with its own embedded Redis in a temporary folder; yields (url, pid).

    `reuse`: folders of another data folder linked into this one, such as exported ONNX graphs, so the
    service starts as a second start would.
    """
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="ce-bench-") as data:
        for folder in reuse:
            if Path(folder).is_dir():
                (Path(data) / Path(folder).name).symlink_to(Path(folder).resolve(), target_is_directory=True)
        child_env = {**os.environ, "CE_DATA_DIR": data, "CE_PORT": str(port), "CE_HOST": "127.0.0.1", **(env or {})}
        child_env.pop("REDIS_URL", None)
        child_env.pop("CE_REDIS_URL", None)
        url = f"http://127.0.0.1:{port}"
        with (Path(data) / "serve.log").open("w+b") as log:
            proc = start_service(child_env, url, log, timeout=timeout)
            try:
                yield url, proc.pid
            finally:
                stop_service(proc)


def _status_mb(pid: int, field: str) -> float:
    found = status_bytes(field, pid)
    return found / 2**20 if found is not None else float("nan")


def peak_rss_mb(pid: int) -> float:
    """The process's high-water resident set (VmHWM), in MB."""
    return _status_mb(pid, "VmHWM")


def rss_mb(pid: int) -> float:
    """The process's resident set now (VmRSS), in MB."""
    return _status_mb(pid, "VmRSS")


class Connection:
    """A keep-alive HTTP/1.1 connection from the standard library: a load generator should cost the
    machine as little as possible, and httpx costs several times more CPU per request."""

    def __init__(self, url: str):
        parsed = urllib.parse.urlsplit(url)
        self._conn = http.client.HTTPConnection(parsed.hostname or "127.0.0.1", parsed.port, timeout=60)

    def post_json(self, path: str, body: dict[str, Any]) -> int:
        return self.request("POST", path, body)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> int:
        """Send and read the whole response; the status, or 0 on a connection error."""
        return self.answer(method, path, body)[0]

    def answer(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, bytes]:
        """Send and read the whole response: its status and body (0 and nothing on a connection error)."""
        try:
            if body is None:
                self._conn.request(method, path)
            else:
                self._conn.request(method, path, json.dumps(body), {"Content-Type": "application/json"})
            response = self._conn.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException):
            self._conn.close()
            return 0, b""

    def close(self) -> None:
        self._conn.close()
