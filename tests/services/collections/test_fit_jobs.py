"""A fit started over HTTP runs in a child process, and its correction is then served."""

from __future__ import annotations

import time

from app.main import create_app
from tests.conftest import serve_app

CATS = ["the cat sleeps in the park", "a cat chases a mouse"]
PLANES = ["the plane flies over the city", "a jet lands at night"]


def test_a_fit_started_over_http_runs_in_a_child_process_and_its_correction_is_then_served(make_settings, tmp_path):
    settings = make_settings(backbone="hashing", follow_interval=0.05)
    with serve_app(create_app(settings)) as c:
        assert c.post("/collections", json={"name": "notes", "correction": "none"}).status_code == 201
        assert c.post("/collections", json={"name": "other"}).status_code == 201
        texts = [f"{a} {b} {n}" for n, (a, b) in enumerate(zip(CATS * 50, PLANES * 50, strict=True))]
        for start in range(0, len(texts), 50):
            docs = [{"id": f"n{i}", "text": texts[i]} for i in range(start, start + 50)]
            assert c.post("/collections/notes/documents", json={"documents": docs}).status_code == 201
        assert c.get("/collections/notes/fit").status_code == 404  # none started yet
        assert c.post("/collections/nope/fit", json={}).status_code == 404
        assert c.post("/collections/default/fit", json={}).status_code == 409  # the service's own: the CLI fits it
        assert c.post("/collections/notes/fit", json={"method": "whitening", "alpha": 2}).status_code == 422
        started = c.post("/collections/notes/fit", json={"method": "whitening", "alpha": 0.5, "dim": 16})
        assert started.status_code == 202 and started.json()["state"] == "running"
        assert c.post("/collections/notes/fit", json={}).status_code == 409  # one at a time per collection
        busy = c.post("/collections/other/fit", json={})  # CE_MAX_FITS=1: one at a time in all
        assert busy.status_code == 429 and int(busy.headers["Retry-After"]) > 0 and "CE_MAX_FITS" in busy.text
        deadline = time.monotonic() + 120
        while (status := c.get("/collections/notes/fit").json())["state"] == "running":
            assert time.monotonic() < deadline, status
            time.sleep(0.2)
        assert status["state"] == "done" and status["correction"].startswith("whitening-"), status
        while c.get("/collections/notes").json()["correction"] != status["correction"]:
            assert time.monotonic() < deadline, "the index never followed the published correction"
            time.sleep(0.1)
        described = c.get("/collections/notes").json()
        assert described["dim"] == 16 and described["index"]["size"] == 100
        assert c.get("/info").json()["correction"] is None  # the default collection keeps serving raw vectors


def test_deleting_a_collection_stops_its_running_fit_and_forgets_it(make_settings):
    app = create_app(make_settings(backbone="hashing"))
    with serve_app(app) as c:
        assert c.post("/collections", json={"name": "notes"}).status_code == 201
        docs = [{"id": f"n{i}", "text": f"{CATS[i % 2]} {PLANES[i % 2]} {i}"} for i in range(100)]
        assert c.post("/collections/notes/documents", json={"documents": docs}).status_code == 201
        assert c.post("/collections/notes/fit", json={}).json()["state"] == "running"
        (job,) = app.state.services.fits._jobs.values()
        assert c.delete("/collections/notes").status_code == 204
        assert job.proc.poll() is not None  # stopped and reaped: no zombie left
        assert c.post("/collections", json={"name": "notes"}).status_code == 201
        assert c.get("/collections/notes/fit").status_code == 404  # the old job's status went with it
