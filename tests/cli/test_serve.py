"""serve and index as a user runs them: end to end, a restart, a kill -9 mid-ingestion, unsafe settings refused."""

from __future__ import annotations

import os
import threading
import time

import httpx
import pytest

from app.core.config import MODELS_DIR
from app.correction.publication import read_artifact_file
from tests.cli.conftest import WORDS, run_cli
from tests.conftest import free_port, server_env, server_log, start_server, stop_server


@pytest.mark.process
def test_index_adds_documents_idempotently(env, tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "the cat sleeps", "metadata": {"k": 1}}\nthe dog barks at night\n')
    for _ in range(2):
        r = run_cli("index", "--corpus", str(docs), env=env)
        assert r.returncode == 0, r.stderr
    assert "the store holds 2" in r.stdout


@pytest.mark.process
@pytest.mark.model
def test_serve_end_to_end_with_embedded_redis_and_restart(tmp_path):
    """`python -m app serve` as `make run` starts it: default backbone, bundled correction, embedded Redis."""
    port = free_port()
    env, base = server_env(tmp_path, port), f"http://127.0.0.1:{port}"
    proc = start_server(env, base)
    try:
        info = httpx.get(f"{base}/info").json()
        bundled = read_artifact_file(MODELS_DIR / "all-MiniLM-L6-v2" / "onnx-int8" / "mean.npz")  # the default's own
        assert (
            info["correction"]["id"] == bundled.id and info["backbone"]["fingerprint"] == bundled.backbone.fingerprint
        )
        r = httpx.post(f"{base}/embed", json={"texts": ["hello there"]}).json()
        assert len(r["embeddings"][0]) == bundled.out_dim == 256
        doc = {"id": "sts", "text": "a plane is taking off ."}
        assert httpx.post(f"{base}/documents", json={"documents": [doc]}).status_code == 201
        assert httpx.get(f"{base}/search", params={"q": "a private zebra query"}).status_code == 200
    finally:
        stop_server(proc)
    assert "zebra" not in server_log(proc)  # what users search for is not written to the log
    assert (tmp_path / "data" / "redis" / "appendonly.aof").exists()
    assert list((tmp_path / "data" / "index").glob("*.npz"))  # the shutdown snapshot
    proc = start_server(env, base)
    try:
        hits = httpx.get(f"{base}/search", params={"q": "an air plane is taking off ."}).json()["results"]
        assert [h["id"] for h in hits] == ["sts"]
        assert httpx.get(f"{base}/info").json()["index"]["opened"]["from"] == "snapshot"
    finally:
        stop_server(proc)


@pytest.mark.process
def test_kill_9_during_bulk_ingestion_loses_no_acknowledged_document(tmp_path, embedded_redis_cleanup):
    """A snapshot, writes and deletes after it, then SIGKILL while a client is still ingesting.

    After the restart every document that got a 2xx is there and searchable in both indexes (a third of them
    long: several passages each), deleted ones are not, nothing is duplicated, and at most the one batch in
    flight at the kill may also have landed.
    """
    port = free_port()
    env = server_env(
        tmp_path, port, CE_BACKBONE="hashing", CE_SNAPSHOT_INTERVAL="2", CE_FOLLOW_INTERVAL="0.1", CE_MAX_LENGTH="16"
    )
    base = f"http://127.0.0.1:{port}"
    filler = " ".join(["Lorem ipsum dolor sit amet."] * 5)  # 25 words: over the 14-token window
    words = [
        f"{WORDS[n % 16]} {WORDS[n * 7 % 16]} number{n}" + (f". {filler}" if n % 3 == 0 else "") for n in range(5000)
    ]

    def doc(i: int) -> dict:
        return {"id": f"d{i}", "text": words[i], "metadata": {"i": i}}

    acknowledged: list[int] = []
    in_flight: list[int] = []

    def ingest(start: int) -> None:
        with httpx.Client(base_url=base, timeout=10) as client:
            for first in range(start, len(words), 25):
                batch = list(range(first, min(first + 25, len(words))))
                in_flight[:] = batch
                try:
                    if client.post("/documents", json={"documents": [doc(i) for i in batch]}).status_code == 201:
                        acknowledged.extend(batch)
                except httpx.TransportError:
                    return  # the server is gone

    proc = start_server(env, base)
    try:
        for start in range(0, 120, 40):
            batch = [doc(i) for i in range(start, start + 40)]
            assert httpx.post(f"{base}/documents", json={"documents": batch}).status_code == 201
        snapshots = tmp_path / "data" / "index"
        deadline = time.monotonic() + 10
        while not list(snapshots.glob("*.npz")) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert list(snapshots.glob("*.npz")), "no snapshot was written"
        for i in (3, 110):  # after the snapshot: replayed from the change log at restart
            assert httpx.delete(f"{base}/documents/d{i}").status_code == 204
        writer = threading.Thread(target=ingest, args=(120,))
        writer.start()
        deadline = time.monotonic() + 60
        while len(acknowledged) < 300 and writer.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(acknowledged) >= 300, "ingestion did not get going"
    finally:
        proc.kill()  # SIGKILL mid-ingestion: no shutdown, no final snapshot
        proc.wait()
    writer.join(timeout=30)
    expected = {f"d{i}" for i in range(120) if i not in (3, 110)} | {f"d{i}" for i in acknowledged}
    maybe = {f"d{i}" for i in in_flight}  # sent, not acknowledged: either outcome is correct

    proc = start_server(env, base)
    try:
        index = httpx.get(f"{base}/info").json()["index"]
        size = index["documents"]
        assert len(expected) <= size <= len(expected | maybe) and index["lexical"]["documents"] == size
        assert index["size"] > size  # the long documents' passages
        for i in sorted({0, 77, 119, *acknowledged[:: max(1, len(acknowledged) // 20)], acknowledged[-1]}):
            for mode, q in (("dense", words[i]), ("lexical", f"number{i}")):
                hits = httpx.get(f"{base}/search", params={"q": q, "k": 1, "mode": mode}).json()["results"]
                assert hits[0]["id"] == f"d{i}" and hits[0]["metadata"] == {"i": i}, (mode, i)
        for i in (3, 110):
            assert httpx.get(f"{base}/documents/d{i}").status_code == 404
        import redis

        from app.store.embedded import EmbeddedRedis

        store = redis.Redis(unix_socket_path=str(EmbeddedRedis(tmp_path / "data" / "redis").socket_path))
        (ids_key,) = store.keys("ce:docs:*")
        assert store.scard(ids_key) == size  # one stored document per id: nothing duplicated, index == store
    finally:
        stop_server(proc)


@pytest.mark.process
@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ({"CE_HOST": "0.0.0.0"}, ["CE_API_KEYS", "CE_ALLOW_UNAUTHENTICATED"]),  # reachable, and no keys
        ({"CE_API_KEYS": '["good-key", " "]'}, ["CE_API_KEYS[1]"]),  # a blank key would let anyone in
        ({"CE_API_KEYS": '["good-key", {"key": "", "scope": "read"}]'}, ["CE_API_KEYS[1]"]),  # scoped, as well
        ({"CE_POLING": "cls"}, ["CE_POLING"]),  # a typo, silently ignored until now
    ],
)
def test_serve_refuses_insecure_or_mistyped_settings_at_start_up(env, extra, named):
    r = run_cli("serve", env={**env, **extra}, timeout=60)
    assert r.returncode == 2, r.stderr[-2000:]
    assert all(name in r.stderr for name in named), r.stderr[-2000:]


@pytest.mark.process
def test_serving_every_interface_without_keys_is_allowed_when_asked_on_purpose(env, tmp_path):
    port = free_port()
    extra = {"CE_HOST": "0.0.0.0", "CE_ALLOW_UNAUTHENTICATED": "true", "CE_PORT": str(port)}
    proc = start_server({**os.environ, **env, **extra}, f"http://127.0.0.1:{port}")
    try:
        assert httpx.post(f"http://127.0.0.1:{port}/embed", json={"texts": ["open"]}).status_code == 200
    finally:
        stop_server(proc)
