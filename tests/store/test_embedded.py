"""The embedded redis-server belongs to the process that started it: one left by a killed server is taken over by
the next and stopped with it; one a live process owns is reused and left alone."""

from __future__ import annotations

import signal

import httpx
import pytest

from app.benchmarks.http import free_port
from app.store.embedded import EmbeddedRedis, _running
from tests.conftest import server_env, start_server, stop_server


def server_pid(folder) -> int | None:
    """The pid of the redis-server answering on the folder's socket, if one does."""
    return EmbeddedRedis(folder)._server_pid()


@pytest.mark.process
def test_a_server_killed_with_9_leaves_no_redis_server_after_the_next_ones_sigterm(tmp_path):
    port = free_port()
    env, base = server_env(tmp_path, port, CE_BACKBONE="hashing"), f"http://127.0.0.1:{port}"
    folder = tmp_path / "data" / "redis"
    first = start_server(env, base)
    assert httpx.post(f"{base}/documents", json={"documents": [{"text": "kept", "id": "k"}]}).status_code == 201
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    orphan = server_pid(folder)
    assert orphan is not None and _running(orphan)  # still serving the folder, its owner gone
    second = start_server(env, base)
    try:
        assert httpx.get(f"{base}/documents/k").status_code == 200
        assert server_pid(folder) == orphan  # taken over, not started again beside it
    finally:
        stop_server(second)
    assert not _running(orphan)


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
