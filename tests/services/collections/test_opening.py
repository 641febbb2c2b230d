"""A collection whose backbone is not loaded is answered at once and loads in the background: a real server
exporting a real ONNX graph, over HTTP."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from tests.conftest import free_port, server_env, server_log, start_server, stop_server, until_loaded


@pytest.mark.process
def test_a_collection_on_a_pooling_not_exported_yet_answers_at_once_then_serves_and_a_failure_shows(
    tmp_path, tiny_bert
):
    not_a_model = tmp_path / "not-a-model"
    not_a_model.mkdir()
    port = free_port()
    env = server_env(
        tmp_path,
        port,
        CE_BACKBONE="onnx",
        CE_MODEL_PATH=str(tiny_bert),
        CE_CORRECTION="none",
        CE_COLLECTION_MODELS=json.dumps([str(not_a_model)]),
    )
    proc = start_server(env, f"http://127.0.0.1:{port}")  # exports the mean-pooling graph: the only one cached
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5) as c:
            started = time.monotonic()
            created = c.post("/collections", json={"name": "firsts", "pooling": "cls"})
            answered = time.monotonic() - started
            assert created.status_code == 201, created.text
            assert created.json()["state"] == "loading" and answered < 1.0, (answered, created.json())
            waiting = c.post("/collections/firsts/embed", json={"texts": ["the cat sat"]})
            assert waiting.status_code == 503 and int(waiting.headers["Retry-After"]) > 0, waiting.text
            described = c.get("/collections/firsts").json()
            assert described["state"] == "loading" and described["opening"]["step"].startswith("loading backbone")

            loaded = until_loaded(c, "firsts")
            assert (loaded["state"], loaded["open"], loaded["dim"]) == ("ready", True, 32), loaded
            docs = [{"id": "c", "text": "the cat sat on the mat"}, {"id": "p", "text": "a plane flies fast"}]
            assert c.post("/collections/firsts/documents", json={"documents": docs}).status_code == 201
            hits = c.get("/collections/firsts/search", params={"q": "a plane flies fast", "mode": "dense"}).json()
            assert [h["id"] for h in hits["results"]] == ["p", "c"]

            # A backbone that cannot load, and a setting only its loaded backbone could refuse: both reported.
            broken = c.post("/collections", json={"name": "broken", "model_path": str(not_a_model)})
            assert broken.status_code == 201 and broken.json()["state"] == "loading"
            factory = c.post(
                "/collections", json={"name": "odd", "pooling": "first_last_avg", "index_factory": "IVF4,PQ7"}
            )
            assert factory.status_code == 201 and factory.json()["state"] == "loading"
            failed = until_loaded(c, "broken")
            assert failed["state"] == "failed" and "did not load" in failed["error"], failed
            assert "index_factory 'IVF4,PQ7': PQ7: a product quantizer" in until_loaded(c, "odd")["error"]
            refused = c.get("/collections/broken/search", params={"q": "cat"})
            assert refused.status_code == 409 and "failed to load" in refused.json()["error"]["message"]
            listed = {d["name"]: d["state"] for d in c.get("/collections").json()["collections"]}
            assert listed == {"default": "ready", "firsts": "ready", "broken": "failed", "odd": "failed"}
            assert c.delete("/collections/broken").status_code == 204
            assert c.post("/collections", json={"name": "broken"}).json()["state"] == "ready"  # the name is free
    finally:
        stop_server(proc)
    assert "unhandled error" not in server_log(proc)
