"""The watcher of a local Ray instance: it finds the processes holding the mark and everything under them (none of
the owner's other children), and ends them; a reused pid is never ended."""

import os
import subprocess
import sys
import time

import psutil
import pytest

from app.shards.reaper import MARK, end, ray_tree

SLEEPER = [
    sys.executable,
    "-c",
    "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
    "'import time; time.sleep(60)']); time.sleep(60)",
]


@pytest.mark.process
def test_the_marked_tree_is_found_and_ended_and_the_rest_left():
    marked = subprocess.Popen(SLEEPER, env={**os.environ, MARK: "m1"})
    other = subprocess.Popen(SLEEPER, env={k: v for k, v in os.environ.items() if k != MARK})
    try:
        deadline = time.monotonic() + 10
        while len(tree := ray_tree(psutil.Process(), "m1")) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marked.pid in tree and len(tree) == 2 and other.pid not in tree  # the child and its own child
        end({**tree, other.pid: 0.0})  # a start time that is not the process's: another process, left alone
        marked.wait(timeout=10)
        assert other.poll() is None
        deadline = time.monotonic() + 10  # the grandchild, re-parented once its parent was killed, is reaped there
        while any(running(pid) for pid in tree) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [pid for pid in tree if running(pid)] == []
    finally:
        for proc in (marked, other):
            proc.kill()
            proc.wait()


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
