"""Fits and tunes started over HTTP: each a `python -m app fit|tune --collection NAME --publish` child process.

The server never imports offline code nor spends its own threads on them; the child reads the collection from
Redis, publishes the result to that collection (a correction, or a ranking), and every server follows it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from app.core.children import tied_popen
from app.core.config import Settings
from app.core.errors import Conflict, NotFound, Overloaded

RETRY_AFTER = 10  # seconds: a fit takes tens of seconds to minutes
PROGRESS = re.compile(r"([\w .+-]+):\s+(\d+)%\|[^|]*\|\s*(\d+)/(\d+)")  # a tqdm bar: "what: 42%|###| 420/1000"


def settings_env(settings: Settings) -> dict[str, str]:
    """The settings as the CE_* variables a child process reads them from (no API keys: it serves nothing)."""
    env = {}
    for name, value in settings.model_dump(mode="json", exclude={"api_keys"}).items():
        if value is not None:
            env[f"CE_{name.upper()}"] = value if isinstance(value, str) else json.dumps(value)
    return env


@dataclass
class FitJob:
    """One child process, its output files, and what it was asked."""

    collection: str
    args: list[str]
    proc: subprocess.Popen[bytes]
    out: IO[bytes]
    err: IO[bytes]
    started: float = field(default_factory=time.time)

    def status(self) -> dict[str, Any]:
        code = self.proc.poll()
        state = "running" if code is None else "done" if code == 0 else "failed"
        self.err.seek(0)
        log = self.err.read().decode(errors="replace").replace("\r", "\n")
        bars = PROGRESS.findall(log)
        body: dict[str, Any] = {
            "collection": self.collection,
            "state": state,
            "args": self.args,
            "started_at": round(self.started, 3),
        }
        if bars:
            what, percent, done, total = bars[-1]
            body["progress"] = {"step": what.strip(), "percent": int(percent), "done": int(done), "total": int(total)}
        if state == "done":
            self.out.seek(0)
            last = self.out.read().decode().strip().splitlines()[-1]
            body.update(json.loads(last) if last.startswith("{") else {"correction": last})
        lines = [line for line in log.splitlines() if line.strip() and not PROGRESS.search(line)]
        body["log"] = lines[-5:]  # what the fit said: the choice it made, or why it failed
        return body


class FitJobs:
    """At most one running job of this kind (fit, tune) per collection; the last one of each is kept for GET."""

    def __init__(self, settings: Settings, what: str = "fit"):
        self.what = what
        self.max_running = settings.max_fits  # two cores: a second job at once would slow both, and serving
        self.env = {**{k: v for k, v in os.environ.items() if not k.startswith("CE_")}, **settings_env(settings)}
        self.cwd = Path.cwd()
        self._jobs: dict[str, FitJob] = {}
        self._lock = threading.Lock()

    def start(self, collection: str, method: str, params: dict[str, float | int]) -> dict[str, Any]:
        args = ["--method", method]
        for name, value in sorted(params.items()):
            args += [f"--{name}", str(value)]
        return self.start_with(collection, args)

    def start_with(self, collection: str, options: list[str]) -> dict[str, Any]:
        """`python -m app WHAT --collection NAME --publish OPTIONS` in a child process; 409 while one runs."""
        with self._lock:
            job = self._jobs.get(collection)
            if job is not None and job.proc.poll() is None:
                raise Conflict(f"a {self.what} of collection {collection!r} is already running")
            running = [name for name, other in self._jobs.items() if other.proc.poll() is None]
            if len(running) >= self.max_running:
                raise Overloaded(
                    f"{len(running)} {self.what}s are running ({', '.join(sorted(running))}; CE_MAX_FITS="
                    f"{self.max_running}); retry later",
                    retry_after=RETRY_AFTER,
                )
            args = [self.what, "--collection", collection, "--publish", *options]
            out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # noqa: SIM115 - kept for status()
            proc = tied_popen(  # ends with the server, kill -9 included
                [sys.executable, "-m", "app", *args],
                stdout=out,
                stderr=err,
                env=self.env,
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
            )
            self._jobs[collection] = job = FitJob(collection, args, proc, out, err)
        return job.status()

    def status(self, collection: str) -> dict[str, Any]:
        job = self._jobs.get(collection)
        if job is None:
            raise NotFound(f"no {self.what} of collection {collection!r} was started here")
        return job.status()

    def forget(self, collection: str) -> None:
        """Stop the collection's job, if one runs, and drop its status: what deleting the collection does (a job
        publishes only at its end, so nothing half-done is left, and a collection made again shows none)."""
        with self._lock:
            job = self._jobs.pop(collection, None)
        if job is not None:
            _stop(job)

    def close(self) -> None:
        """Stop running jobs (a job publishes only at its end, so nothing half-done is left)."""
        with self._lock:
            jobs, self._jobs = list(self._jobs.values()), {}
        for job in jobs:
            _stop(job)


def _stop(job: FitJob) -> None:
    """SIGTERM, SIGKILL if it has not ended within 30 s; reaped either way, so no zombie is left."""
    if job.proc.poll() is None:
        job.proc.terminate()
        try:
            job.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            job.proc.kill()
            job.proc.wait()
    job.out.close()
    job.err.close()
