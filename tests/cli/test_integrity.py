"""`python -m app verify`: the snapshot a restart would load, and a running server's indexes, against the store."""

from __future__ import annotations

import json

import httpx
import pytest

from app.core.config import Settings
from app.services.container import Services
from app.services.documents import DocumentInput
from tests.cli.conftest import run_cli
from tests.conftest import start_server, stop_server


def drifted_snapshot(env: dict) -> None:
    """A snapshot whose lexical index lacks an acknowledged document and keeps a deleted one (counts agree)."""
    settings = Settings(
        backbone="hashing",
        redis_url=env["CE_REDIS_URL"],
        key_prefix=env["CE_KEY_PREFIX"],
        data_dir=env["CE_DATA_DIR"],
        models_dir=env["CE_MODELS_DIR"],
    )
    service = Services.from_settings(settings)
    try:
        service.documents.add([DocumentInput(text=f"the cat number {i}", id=f"d{i}") for i in range(12)])
        lexical = service.served.current.lexical
        lexical.remove(["d3"])
        lexical.upsert(["ghost"], ["a ghost"])
        lexical.commit()
    finally:
        service.close()


@pytest.mark.process
def test_verify_names_a_snapshots_drift_and_repairs_it(env):
    drifted_snapshot(env)
    found = run_cli("verify", "--json", env=env)
    assert found.returncode == 1, found.stderr
    report = json.loads(found.stdout)
    assert (report["ok"], report["stored"], report["dense"]["missing"]) == (False, 12, 0)
    assert report["lexical"] == {"missing": 1, "extra": 1, "examples": ["d3", "ghost"]}
    repaired = run_cli("verify", "--repair", env=env)
    assert repaired.returncode == 0, repaired.stderr
    assert "repair: rebuilt from the store" in repaired.stdout
    again = run_cli("verify", "--json", env=env)
    assert again.returncode == 0 and json.loads(again.stdout)["lexical"]["missing"] == 0


@pytest.mark.process
def test_verify_asks_a_running_server_and_its_metrics_show_the_check(env, tmp_path):
    from app.benchmarks.http import free_port

    port = free_port()
    server = start_server({**env, "CE_PORT": str(port)}, f"http://127.0.0.1:{port}")
    try:
        base = f"http://127.0.0.1:{port}"
        added = httpx.post(f"{base}/documents", json={"documents": [{"text": "a zebra", "id": "z"}]})
        assert added.status_code == 201
        checked = run_cli("verify", "--url", base, "--json", env=env)
        assert checked.returncode == 0, checked.stderr
        assert json.loads(checked.stdout)["dense"] == {"missing": 0, "extra": 0, "examples": []}
        metrics = httpx.get(f"{base}/metrics").text
        assert 'ce_index_drift{collection="default",index="lexical"} 0.0' in metrics
        assert httpx.get(f"{base}/info").json()["index"]["integrity"]["ok"] is True
        assert httpx.post(f"{base}/collections/nope/verify").status_code == 404
    finally:
        stop_server(server)
