"""Fixtures for the integration tests: the CLI as a child process against the session's real Redis."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def run_cli(*args, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=ROOT, env={**os.environ, **env},
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


@pytest.fixture
def env(redis_url, key_prefix, tmp_path) -> dict:
    return {"CE_BACKBONE": "hashing", "CE_REDIS_URL": redis_url, "CE_KEY_PREFIX": key_prefix,
            "CE_DATA_DIR": str(tmp_path / "data"), "CE_MODELS_DIR": str(tmp_path / "models")}  # fmt: skip
