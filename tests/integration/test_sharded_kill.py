"""A collection kept in parts on a local Ray instance, against a real server process: a search right after a 201 sees
the documents (the shards catch up on the change log before they answer, not at their next follower step), and
kill -9 of the server leaves none of the processes its Ray instance started, the agents its raylet started included."""

import signal
import time

import httpx
import psutil
import pytest

from tests.conftest import free_port, server_env, server_log, start_server, until_loaded

pytest.importorskip("ray.serve")


def test_a_search_after_a_201_sees_the_documents_and_kill_9_leaves_no_ray_process(tmp_path):
    port = free_port()
    env = server_env(tmp_path, port, CE_BACKBONE="hashing", CE_FOLLOW_INTERVAL="30", CE_SHARD_TIMEOUT="30")
    proc = start_server(env, f"http://127.0.0.1:{port}")
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as c:
            assert c.post("/collections", json={"name": "parts", "shards": 2}).status_code == 201
            until_loaded(c, "parts")
            for n in range(4):  # a follower step every 30 s: only catching up on the search can find them
                docs = [{"id": f"r{n}-{i}", "text": f"round{n} word{i} about herons"} for i in range(6)]
                assert c.post("/collections/parts/documents", json={"documents": docs}).status_code == 201
                for mode in ("lexical", "dense", "hybrid"):
                    found = c.post("/collections/parts/search", json={"q": f"round{n} word3", "mode": mode})
                    assert found.status_code == 200 and not found.json()["partial"], found.text
                    assert found.json()["results"][0]["id"] == f"r{n}-3", (n, mode, found.text)
        tree = {p.pid: p.create_time() for p in psutil.Process(proc.pid).children(recursive=True)}
        names = {psutil.Process(pid).name() for pid in tree}
        assert {"raylet", "gcs_server", "ray::DashboardAgent"} <= names, names
    except BaseException:
        print(server_log(proc)[-4000:])
        proc.kill()
        raise
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    deadline, left = time.monotonic() + 10, list(tree)
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = [pid for pid, started in tree.items() if psutil.pid_exists(pid) and alive(pid, started)]
    assert left == [], [psutil.Process(pid).name() for pid in left]


def alive(pid: int, started: float) -> bool:
    try:
        process = psutil.Process(pid)
        return process.create_time() == started and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
