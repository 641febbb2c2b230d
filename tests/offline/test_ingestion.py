"""Bulk ingestion: a corpus streamed in acknowledged batches; killed with SIGKILL it loses nothing acknowledged, and
started again it resumes there without encoding a stored document twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from app.store.redis_store import RedisStore
from tests.cli.conftest import run_cli
from tests.conftest import ROOT

TOTAL = 40_000


@pytest.mark.process
def test_a_killed_ingestion_resumes_after_its_last_acknowledged_batch(env, redis_url, key_prefix, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": f"d{i}", "text": f"note {i} about item {i % 97}"}) + "\n" for i in range(TOTAL))
    )
    store = RedisStore.from_url(redis_url, prefix=key_prefix)
    args = [sys.executable, "-m", "app", "index", "--corpus", str(corpus), "--batch", "100"]
    proc = subprocess.Popen(
        args, cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120
        while not (keys := store.client.keys(f"{key_prefix}:ingestion:*")) or not store.client.hvals(keys[0]):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.02)
        time.sleep(0.5)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
        (collection_key,) = [k.decode().split(":ingestion:", 1)[1].strip("{}") for k in keys]
        checkpoint = json.loads(store.client.hvals(keys[0])[0])
        stored = store.documents.count(collection_key)
        assert 0 < checkpoint["lineno"] <= stored < TOTAL  # killed mid-run, after some batches
        acknowledged = store.documents.get(collection_key, [f"d{i}" for i in range(checkpoint["lineno"])])
        assert all(r is not None and r.text == f"note {i} about item {i % 97}" for i, r in enumerate(acknowledged))

        r = run_cli("index", "--corpus", str(corpus), "--batch", "100", "--json", env=env)
        assert r.returncode == 0, r.stderr[-2000:]
        resumed = json.loads(r.stdout.strip().splitlines()[-1])
        assert resumed["resumed_at_line"] == checkpoint["lineno"] and resumed["read"] == TOTAL - checkpoint["lineno"]
        assert resumed["encoded"] == TOTAL - stored  # what was stored is not encoded again
        assert resumed["stored"] == TOTAL and resumed["documents_per_s"] > 0

        again = json.loads(run_cli("index", "--corpus", str(corpus), "--json", env=env).stdout.splitlines()[-1])
        assert again["read"] == 0 and again["stored"] == TOTAL  # done: nothing left to read
        r = run_cli("index", "--corpus", str(corpus), "--restart", "--batch", "1000", "--json", env=env)
        whole = json.loads(r.stdout.splitlines()[-1])
        assert (whole["read"], whole["encoded"], whole["unchanged"]) == (TOTAL, 0, TOTAL)
    finally:
        proc.kill()
        store.close()


@pytest.mark.process
def test_a_changed_document_is_encoded_again_and_another_file_at_the_path_starts_over(env, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("first text\nsecond text\n")
    first = json.loads(run_cli("index", "--corpus", str(corpus), "--json", env=env).stdout.splitlines()[-1])
    assert (first["read"], first["encoded"], first["stored"]) == (2, 2, 2)
    corpus.write_text('{"id": "x", "text": "third"}\nfirst text\n')  # another file: its head differs
    second = json.loads(run_cli("index", "--corpus", str(corpus), "--json", env=env).stdout.splitlines()[-1])
    assert (second["resumed_at_line"], second["read"], second["encoded"], second["unchanged"]) == (0, 2, 1, 1)
    r = run_cli("index", "--corpus", str(tmp_path / "none.txt"), env=env)
    assert r.returncode == 2 and "file not found" in r.stderr
