"""Fixtures for the command line's tests (and the integration tests'): the CLI as a child process against the
session's real Redis, and the small corpora and pair files the commands read."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import ROOT


def run_cli(*args, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def env(redis_url, key_prefix, tmp_path) -> dict:
    return {
        "CE_BACKBONE": "hashing",
        "CE_REDIS_URL": redis_url,
        "CE_KEY_PREFIX": key_prefix,
        "CE_DATA_DIR": str(tmp_path / "data"),
        "CE_MODELS_DIR": str(tmp_path / "models"),
    }


WORDS = "cat dog bird plane river city park night joy rain sun tree house road car boat".split()


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(f"the {a} and the {b} near a {c}" for a in WORDS for b in WORDS[::3] for c in WORDS[::5]))
    return path


@pytest.fixture
def pairs(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("\n".join(f"the {a} runs\tthe {b} runs\t{5.0 if a == b else 1.0}" for a in WORDS for b in WORDS))
    return path


@pytest.fixture
def graded_pairs(tmp_path):
    """Pairs of 4-word sentences; gold = how many words they share, so corrections can reorder them."""
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(600):
        a = list(rng.choice(WORDS, 4, replace=False))
        shared = int(rng.integers(0, 5))
        b = a[:shared] + list(rng.choice([w for w in WORDS if w not in a], 4 - shared, replace=False))
        lines.append(f"{' '.join(a)}\t{' '.join(b)}\t{shared:.1f}")
    path = tmp_path / "graded.tsv"
    path.write_text("\n".join(lines))
    return path


@pytest.fixture
def embedded_redis_cleanup(tmp_path):
    """A SIGKILLed server leaves its embedded redis-server running: stop it, whatever the test did."""
    yield
    import redis

    from app.store.embedded import EmbeddedRedis

    sock = EmbeddedRedis(tmp_path / "data" / "redis").socket_path
    if sock.exists():
        with contextlib.suppress(redis.RedisError):  # it answers a shutdown by closing the connection
            redis.Redis(unix_socket_path=str(sock)).shutdown(nosave=True)
