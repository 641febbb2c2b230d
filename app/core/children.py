"""Child processes that end with the process that started them, kill -9 included: on Linux each is asked for a
SIGTERM when its parent dies (PR_SET_PDEATHSIG), so no redis-server, fit or tune is left running as an orphan.

The kernel sends that signal when the *thread* that forked the child ends, not the process; request threads come
and go (a thread pool drops idle ones), so every tied child is started from one thread that lives as long as the
process does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import queue
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future
from typing import Any

_PR_SET_PDEATHSIG = 1
_requests: queue.SimpleQueue[tuple[list[str], dict[str, Any], Future[subprocess.Popen[Any]]]] = queue.SimpleQueue()
_spawner: threading.Thread | None = None
_lock = threading.Lock()


_prctl = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True).prctl if sys.platform.startswith("linux") else None


def _die_with_parent(parent: int) -> None:
    """Run in the child before it executes: SIGTERM when the spawning thread's process ends (or has already); libc
    is loaded beforehand, in the parent, since a forked child of a threaded process must not load libraries."""
    if _prctl is not None:  # tied_popen only asks for this on Linux, where it is loaded
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # the parent died between fork and prctl: nobody would signal us
        os._exit(1)


def _spawn_forever() -> None:
    while True:
        args, options, result = _requests.get()
        try:
            result.set_result(subprocess.Popen(args, **options))  # noqa: S603 - the caller's own command
        except BaseException as exc:  # handed to the caller, who raises it
            result.set_exception(exc)


def tied_popen(args: list[str], **options: Any) -> subprocess.Popen[Any]:
    """subprocess.Popen(args, **options), the child tied to this process's life (elsewhere than Linux: plain)."""
    if not sys.platform.startswith("linux"):
        return subprocess.Popen(args, **options)  # noqa: S603
    global _spawner
    with _lock:
        if _spawner is None or not _spawner.is_alive():
            _spawner = threading.Thread(target=_spawn_forever, name="child-spawner", daemon=True)
            _spawner.start()
    parent = os.getpid()
    result: Future[subprocess.Popen[Any]] = Future()
    _requests.put((args, {**options, "preexec_fn": lambda: _die_with_parent(parent)}, result))
    return result.result()
