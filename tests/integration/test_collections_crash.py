"""kill -9 while two collections ingest: every acknowledged document is back in its own collection only."""

from __future__ import annotations

import threading
import time

import httpx

from tests.conftest import free_port, server_env, start_server, stop_server

WORDS = "cat dog bird plane river city park night joy rain sun tree house road car boat".split()


def text(name: str, n: int) -> str:
    return f"{name} {WORDS[n % 16]} {WORDS[n * 7 % 16]} number{n}"


def test_kill_9_during_ingestion_into_two_collections_loses_nothing_and_mixes_nothing(tmp_path, redis_url, key_prefix):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = server_env(tmp_path, port, CE_BACKBONE="hashing", CE_REDIS_URL=redis_url, CE_KEY_PREFIX=key_prefix,
                     CE_SNAPSHOT_INTERVAL="1", CE_FOLLOW_INTERVAL="0.1")  # fmt: skip
    acknowledged: dict[str, list[int]] = {"alpha": [], "beta": []}
    in_flight: dict[str, list[int]] = {"alpha": [], "beta": []}

    def ingest(name: str) -> None:
        with httpx.Client(base_url=f"{base}/collections/{name}", timeout=10) as client:
            for first in range(0, 4000, 20):
                batch = list(range(first, first + 20))
                in_flight[name][:] = batch
                docs = [{"id": f"{name}{i}", "text": text(name, i)} for i in batch]
                try:
                    if client.post("/documents", json={"documents": docs}).status_code == 201:
                        acknowledged[name].extend(batch)
                except httpx.TransportError:
                    return  # the server is gone

    proc = start_server(env, base)
    try:
        assert httpx.post(f"{base}/collections", json={"name": "alpha"}).status_code == 201
        assert httpx.post(f"{base}/collections", json={"name": "beta", "pooling": "cls"}).status_code == 201
        writers = [threading.Thread(target=ingest, args=(name,)) for name in acknowledged]
        for w in writers:
            w.start()
        deadline = time.monotonic() + 60
        while min(len(a) for a in acknowledged.values()) < 200 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert min(len(a) for a in acknowledged.values()) >= 200, "ingestion did not get going"
    finally:
        proc.kill()  # SIGKILL mid-ingestion: no shutdown, no final snapshot
        proc.wait()
    for w in writers:
        w.join(timeout=30)

    proc = start_server(env, base)
    try:
        for name, other in (("alpha", "beta"), ("beta", "alpha")):
            collection = f"{base}/collections/{name}"
            count = httpx.get(collection).json()["documents"]
            size = httpx.get(collection).json()["index"]["size"]
            assert len(acknowledged[name]) <= count == size <= len(acknowledged[name]) + len(in_flight[name])
            for i in acknowledged[name][:: max(1, len(acknowledged[name]) // 15)] + [acknowledged[name][-1]]:
                hits = httpx.get(f"{collection}/search", params={"q": text(name, i), "k": 1}).json()["results"]
                assert hits[0]["id"] == f"{name}{i}"
            assert httpx.get(f"{collection}/documents/{other}0").status_code == 404  # nothing of the other one
            hits = httpx.get(f"{collection}/search", params={"q": text(other, 5), "k": 50}).json()["results"]
            assert all(h["id"].startswith(name) for h in hits)
    finally:
        stop_server(proc)
