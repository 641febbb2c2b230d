"""A process's memory as Linux counts it (/proc/PID/status), for benchmarks and a shard's status."""

from __future__ import annotations

from pathlib import Path


def status_bytes(field: str, pid: int | str = "self") -> int | None:
    """VmRSS, VmHWM (peak), RssAnon (heap, not file pages)... in bytes; None where Linux does not report it."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    return None
