"""A process's memory as Linux counts it (/proc/PID/status), for benchmarks and a shard's status; and handing
the heap's free pages back to it."""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache
from pathlib import Path


def status_bytes(field: str, pid: int | str = "self") -> int | None:
    """VmRSS, VmHWM (peak), RssAnon (heap, not file pages)... in bytes; None where Linux does not report it."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    return None


@cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def release_free_memory() -> bool:
    """Give the heap's free pages back to the system (glibc's malloc_trim): the buffers of a large request are freed
    but kept by the allocator otherwise, and resident memory stays at its peak. False where there is no glibc."""
    libc = _libc()
    if libc is None or not hasattr(libc, "malloc_trim"):
        return False
    libc.malloc_trim(0)
    return True
