"""Scale-out: fit and bulk indexing on a local Ray instance, and API replicas sharing one real Redis."""

from __future__ import annotations

import time

import httpx

from app.backbones import build_backbone
from app.core.config import Settings
from app.correction.publication import publish
from app.offline.fit import fit_artifact
from tests.conftest import CORPUS, free_port, server_env, start_server, stop_server


def test_replicas_on_one_redis_serve_a_new_correction_within_5_s(redis_url, key_prefix, store, tmp_path):
    replicas = []
    try:
        for n in range(2):
            port = free_port()
            env = server_env(
                tmp_path / f"r{n}",
                port,
                CE_BACKBONE="hashing",
                CE_REDIS_URL=redis_url,
                CE_KEY_PREFIX=key_prefix,
                CE_MODELS_DIR=str(tmp_path / "no-models"),
            )
            base = f"http://127.0.0.1:{port}"
            replicas.append((start_server(env, base), base))
        first = httpx.post(f"{replicas[0][1]}/documents", json={"documents": [{"id": "x", "text": "a dog runs"}]})
        assert first.status_code == 201
        backbone = build_backbone(Settings(backbone="hashing"))
        artifact = fit_artifact(backbone, CORPUS, "whitening", {"alpha": 0.5, "dim": 8}, progress=False)
        published = time.monotonic()
        publish(store, artifact)  # what `fit --publish` does, from any machine
        waiting = {base for _, base in replicas}
        while waiting and time.monotonic() - published < 5:
            for base in list(waiting):
                info = httpx.get(f"{base}/info").json()
                if info["correction"] and info["correction"]["id"] == artifact.id:
                    assert info["index"]["correction"] == artifact.id and info["index"]["size"] == 1
                    waiting.discard(base)
            time.sleep(0.1)
        assert not waiting, f"not serving {artifact.id} 5 s after it was published: {waiting}"
        hits = httpx.get(f"{replicas[1][1]}/search", params={"q": "a dog runs"}).json()
        assert hits["correction"] == artifact.id and [h["id"] for h in hits["results"]] == ["x"]
    finally:
        for proc, _ in replicas:
            stop_server(proc)


def _served_ids(base: str, texts: dict[str, str]) -> set[str]:
    """Which of these documents a replica's index finds (each searched by its own text: the hashing
    backbone ranks a document first for its exact text)."""
    found = set()
    for doc_id, text in texts.items():
        hits = httpx.get(f"{base}/search", params={"q": text, "k": 1}).json()["results"]
        if hits and hits[0]["id"] == doc_id:
            found.add(doc_id)
    return found


def test_a_paused_replica_behind_a_trimmed_log_serves_exactly_the_stored_documents(
    redis_url, key_prefix, store, tmp_path
):
    """Replica B is paused (SIGSTOP) while A deletes, replaces and adds documents, then snapshots, which trims
    the change log past B's position once B stops reporting it. Resumed, B must see the gap and rebuild."""
    import signal

    texts = {f"d{i}": f"{CORPUS[i]} number {i}" for i in range(10)}
    replicas = []
    try:
        for n in range(2):
            port = free_port()
            env = server_env(
                tmp_path / f"r{n}",
                port,
                CE_BACKBONE="hashing",
                CE_REDIS_URL=redis_url,
                CE_KEY_PREFIX=key_prefix,
                CE_MODELS_DIR=str(tmp_path / "no-models"),
                CE_FOLLOW_INTERVAL="0.04",  # a replica silent 30 of them (1.2 s) no longer holds the log back
                CE_SNAPSHOT_INTERVAL="0.5",
            )
            replicas.append((start_server(env, f"http://127.0.0.1:{port}"), f"http://127.0.0.1:{port}"))
        (a_proc, a), (b_proc, b) = replicas
        first = [{"id": f"d{i}", "text": texts[f"d{i}"]} for i in range(5)]
        assert httpx.post(f"{a}/documents", json={"documents": first}).status_code == 201
        _wait_until(lambda: httpx.get(f"{b}/info").json()["index"]["size"] == 5)
        key = build_backbone(Settings(backbone="hashing")).fingerprint
        b_proc.send_signal(signal.SIGSTOP)
        try:
            for doc_id in ("d0", "d1"):
                assert httpx.delete(f"{a}/documents/{doc_id}").status_code == 204
            texts["d2"] = "an entirely new text for the second document"
            later = [{"id": f"d{i}", "text": texts[f"d{i}"]} for i in (2, 5, 6, 7, 8)]
            assert httpx.post(f"{a}/documents", json={"documents": later}).status_code == 201
            time.sleep(1.5)  # B's reported position expires (30 follow intervals); until then no trim passes it
            assert len(store.replicas.live(key)) == 1  # A's alone
            last_doc = {"documents": [{"id": "d9", "text": texts["d9"]}]}
            assert httpx.post(f"{a}/documents", json=last_doc).status_code == 201
            last = store.changes.last_id(key)
            _wait_until(lambda: store.changes.trimmed_through(key) == last, timeout=15)  # A snapshotted, trimmed
        finally:
            b_proc.send_signal(signal.SIGCONT)
        stored = {doc_id for doc_id in texts if doc_id not in ("d0", "d1")}
        for base in (a, b):
            _wait_until(lambda base=base: httpx.get(f"{base}/info").json()["index"]["size"] == len(stored))
            assert _served_ids(base, texts) == stored, base
    finally:
        for proc, _ in replicas:
            stop_server(proc)


def _wait_until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
