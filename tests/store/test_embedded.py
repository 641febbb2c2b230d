"""The embedded redis-server belongs to the process that started it: one left by a killed server is taken over by
the next and stopped with it; one a live process owns is reused and left alone."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from app.benchmarks.http import free_port
from app.store.embedded import EmbeddedRedis, _running
from tests.conftest import server_env, start_server, stop_server


def server_pid(folder) -> int | None:
    """The pid of the redis-server answering on the folder's socket, if one does."""
    return EmbeddedRedis(folder)._server_pid()


def servers_of(folder) -> list[int]:
    """The pids of every redis-server process started for the folder (by its socket's path on the command line)."""
    socket = str(EmbeddedRedis(folder).socket_path).encode()
    found = []
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if proc.name.isdigit() and socket in (proc / "cmdline").read_bytes() and _running(int(proc.name)):
                found.append(int(proc.name))
    return found


@pytest.mark.process
def test_a_server_killed_with_9_leaves_no_redis_server_and_the_next_finds_what_was_acknowledged(tmp_path):
    port = free_port()
    env, base = server_env(tmp_path, port, CE_BACKBONE="hashing"), f"http://127.0.0.1:{port}"
    folder = tmp_path / "data" / "redis"
    first = start_server(env, base)
    assert len(servers_of(folder)) == 1
    assert httpx.post(f"{base}/documents", json={"documents": [{"text": "kept", "id": "k"}]}).status_code == 201
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    deadline = time.monotonic() + 2
    while servers_of(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert servers_of(folder) == []  # it ended with its owner, not re-parented to PID 1
    second = start_server(env, base)
    try:
        assert httpx.get(f"{base}/documents/k").status_code == 200  # fsynced before the 201
    finally:
        stop_server(second)
    assert servers_of(folder) == []


ORPHAN = """
import os, subprocess, sys
import app.store.embedded as embedded
embedded.tied_popen = subprocess.Popen  # as releases before the tie started it
embedded.EmbeddedRedis(sys.argv[1]).start()
os.kill(os.getpid(), 9)
"""


@pytest.mark.process
def test_an_orphan_an_older_release_left_is_taken_over_and_stopped_with_its_new_owner(tmp_path):
    subprocess.run([sys.executable, "-c", ORPHAN, str(tmp_path)], check=False, timeout=60)
    (orphan,) = servers_of(tmp_path)
    owner = EmbeddedRedis(tmp_path)
    owner.start()
    assert server_pid(tmp_path) == orphan  # taken over, not started again beside it
    owner.stop()
    assert not _running(orphan) and servers_of(tmp_path) == []


def test_a_server_another_live_process_owns_is_reused_and_left_running(tmp_path):
    owner = EmbeddedRedis(tmp_path)
    owner.start()
    try:
        guest = EmbeddedRedis(tmp_path)
        assert guest.start() == owner.url
        guest.stop()
        assert owner._alive()
    finally:
        owner.stop()
    assert server_pid(tmp_path) is None


def test_a_folder_whose_owner_lives_but_whose_server_is_gone_is_an_error(tmp_path):
    owner = EmbeddedRedis(tmp_path)
    owner.start()
    owner._proc.kill()
    owner._proc.wait()
    try:
        with pytest.raises(RuntimeError, match="another process owns"):
            EmbeddedRedis(tmp_path).start(timeout=2)
    finally:
        owner.stop()
