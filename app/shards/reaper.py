"""The processes of a local Ray instance, ended with the server that started them, kill -9 included. Ray's own
processes are told to die with the server, but the agents its raylet starts (DashboardAgent, RuntimeEnvAgent) are
re-parented to PID 1 and live on. This watcher, tied to the server (core/children), keeps the tree of the processes
that Ray started (those holding the server's mark, and everything below them) and ends them when the server ends."""

from __future__ import annotations

import os
import signal
import sys
import time

import psutil

MARK = "CE_RAY_OWNER"  # set while ray.init starts its processes: what tells them from the server's other children
LOOK_EVERY = 0.5  # seconds between two readings of the tree


def ray_tree(owner: psutil.Process, mark: str) -> dict[int, float]:
    """Each process Ray started for `owner` (pid: start time, so a reused pid is never ended)."""
    found: dict[int, float] = {}
    for child in owner.children():
        try:
            if child.environ().get(MARK) != mark:
                continue
            for process in [child, *child.children(recursive=True)]:
                found[process.pid] = process.create_time()
        except psutil.Error:  # ended meanwhile, or not ours to read
            continue
    return found


def end(processes: dict[int, float]) -> None:
    for pid, started in processes.items():
        try:
            process = psutil.Process(pid)
            if process.create_time() == started:
                process.kill()
        except psutil.Error:
            continue


def watch(owner_pid: int, mark: str) -> None:
    """Until the owner ends (or asks, with SIGTERM), read Ray's tree; then end what is left of it."""
    seen: dict[int, float] = {}
    stop = False

    def asked(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, asked)
    try:
        owner = psutil.Process(owner_pid)
        while not stop and os.getppid() == owner_pid:
            seen |= ray_tree(owner, mark)
            time.sleep(LOOK_EVERY)
    except psutil.Error:
        pass
    end(seen)


if __name__ == "__main__":
    watch(int(sys.argv[1]), sys.argv[2])
