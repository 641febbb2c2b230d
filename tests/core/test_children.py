"""A tied child ends with its parent, kill -9 included, and not before: not when the thread that asked for it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from app.store.embedded import _running

PARENT = """
import threading, time
from app.core.children import tied_popen
started = []
asker = threading.Thread(target=lambda: started.append(tied_popen(["sleep", "60"])))
asker.start(); asker.join()  # the thread that asked is gone: the child must live on
time.sleep(0.5)
print(started[0].pid, started[0].poll(), flush=True)
time.sleep(60)
"""


@pytest.mark.process
def test_a_tied_child_outlives_the_thread_that_asked_for_it_and_ends_with_its_parent_killed_by_9():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        pid, code = parent.stdout.readline().split()
        child = int(pid)
        assert code == "None" and _running(child)
    finally:
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 2
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _running(child)
