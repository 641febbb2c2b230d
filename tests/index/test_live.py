"""The index's life against a real Redis: swaps on a new correction, restarts, snapshots, other writers."""

from __future__ import annotations

import threading
import time

import numpy as np

from app.core.stored_vectors import from_stored, to_stored
from app.correction.pipeline import Correction, project
from app.index import factories
from app.offline.fit import fit_artifact
from app.services.container import Services
from app.services.documents import DocumentInput
from app.services.search_query import SearchQuery
from tests.conftest import CORPUS


def wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def crash(service: Services) -> None:
    """Stop without the shutdown snapshot, as a kill would: only what Redis acknowledged is left."""
    live = service.served
    live._stop.set()  # the follower stops; close() and its last snapshot are never called
    live._follower.join()
    service.engine.close()
    service.store.close()


def fitted(backbone, alpha, dim):
    return fit_artifact(backbone, CORPUS, "whitening", {"alpha": alpha, "dim": dim}, progress=False)


def stored(raw: np.ndarray) -> np.ndarray:
    """Raw vectors as the store gives them back."""
    data, dtype = to_stored(raw)
    return from_stored([data], [dtype], raw.shape[1])


def docs(n, start=0):
    return [
        DocumentInput(text=CORPUS[i % len(CORPUS)] + f" #{i}", id=f"d{i}", metadata={"even": i % 2 == 0})
        for i in range(start, start + n)
    ]


def test_queries_during_a_correction_swap_see_one_correction_at_a_time(settings, backbone):
    service = Services.from_settings(settings)
    try:
        service.documents.add(docs(240))
        raw_docs = stored(backbone.encode([d.text for d in docs(240)]))  # as Redis keeps them (float16)
        old, new = fitted(backbone, 0.5, 8), fitted(backbone, 0.2, 6)
        service.publish_correction(old).result(30)
        corrections = {old.id: Correction(old), new.id: Correction(new)}
        query = "the cat sleeps in the park"
        raw_query = backbone.encode([query])
        seen, stop = [], threading.Event()

        def ask():
            while not stop.is_set():
                seen.append(service.search.search(SearchQuery(query, k=5)))

        reader = threading.Thread(target=ask)
        reader.start()
        service.publish_correction(new).result(30)
        time.sleep(0.1)
        stop.set()
        reader.join()
        assert {found.space["correction"] for found in seen} == {old.id, new.id}
        for found in seen:  # every score is the cosine in the space the response names, never a mixture
            hits, cid = found.hits, found.space["correction"]
            correction = corrections[cid]
            q = project(raw_query, correction)[0]
            rows = [int(h.id[1:]) for h in hits]
            expected = project(raw_docs[rows], correction) @ q
            np.testing.assert_allclose([h.score for h in hits], expected, atol=1e-5)
        info = service.info()
        assert info["correction"]["id"] == info["index"]["correction"] == new.id and info["index"]["size"] == 240
    finally:
        service.close()


def test_a_correction_published_by_another_process_is_picked_up(settings, backbone, store):
    from app.correction.publication import publish

    service = Services.from_settings(settings)
    pinned = Services.from_settings(settings.model_copy(update={"correction": "none"}))
    try:
        service.documents.add(docs(20))
        artifact = fitted(backbone, 0.5, 8)
        publish(store, artifact)  # as `python -m app fit --publish` does
        wait_until(lambda: service.info()["index"]["correction"] == artifact.id)
        assert service.dim == 8 and len(service.index) == 20
        time.sleep(0.3)
        assert pinned.correction is None and len(pinned.index) == 20  # `none` is not overridden by Redis
    finally:
        pinned.close()
        service.close()


def test_every_acknowledged_write_survives_a_crash_with_or_without_a_snapshot(settings):
    service = Services.from_settings(settings)
    service.documents.add(docs(50))
    service.served.snapshot()
    service.documents.add(docs(20, start=50))  # after the snapshot: must come back from the change log
    for doc_id in ("d0", "d55"):
        service.documents.delete(doc_id)
    service.documents.add([DocumentInput(text="a brand new text about rivers", id="d1")])  # upsert
    crash(service)

    again = Services.from_settings(settings)
    try:
        assert again.info()["index"]["opened"]["from"] == "snapshot"
        assert len(again.index) == 68 and "d0" not in again.index and "d55" not in again.index
        assert again.search.search(SearchQuery("a brand new text about rivers", k=1)).hits[0].id == "d1"
        assert again.search.search(SearchQuery(docs(1, start=60)[0].text, k=1)).hits[0].id == "d60"
        assert {h.id for h in again.search.search(SearchQuery("the cat", k=70, filter={"even": True})).hits} == {
            f"d{i}" for i in range(2, 70, 2) if i != 0
        }
    finally:
        again.close()


def test_auto_moves_to_an_approximate_index_when_it_grows(settings, monkeypatch):
    monkeypatch.setattr(factories, "EXACT_LIMIT", 100)
    service = Services.from_settings(settings)
    try:
        service.documents.add(docs(60))
        assert service.index.factory == "Flat"
        for start in range(60, 300, 60):
            service.documents.add(docs(60, start=start))
        wait_until(lambda: service.index.factory.startswith("IVF"))
        assert len(service.index) == 300 and service.index.params.get("nprobe")
        assert service.search.search(SearchQuery(docs(1, start=250)[0].text, k=1)).hits[0].id == "d250"
    finally:
        service.close()


def test_a_corrupt_or_foreign_artifact_is_refused_and_the_last_good_one_keeps_serving(settings, backbone, store):
    from app.backbones.hashing import HashingBackbone
    from app.correction.publication import publish

    good = fitted(backbone, 0.5, 8)
    publish(store, good)
    service = Services.from_settings(settings)
    try:
        service.documents.add(docs(10))
        assert service.correction.id == good.id
        blob = bytearray(fitted(backbone, 0.2, 6).to_bytes())
        blob[len(blob) // 2] ^= 0xFF  # one flipped byte: the checksum no longer matches
        store.artifacts.put(backbone.fingerprint, "whitening-corrupt", bytes(blob), make_current=True)
        foreign = fit_artifact(HashingBackbone(dim=64, pooling="cls"), CORPUS, "center", {}, progress=False)
        time.sleep(0.3)  # a few follow rounds
        assert service.correction.id == good.id and len(service.index) == 10
        store.artifacts.put(backbone.fingerprint, foreign.id, foreign.to_bytes(), make_current=True)
        time.sleep(0.3)
        assert (
            service.correction.id == good.id
            and service.search.search(SearchQuery("the cat", k=3)).space["correction"] == good.id
        )
    finally:
        service.close()
    # At start-up the bad current one is refused too, and the newest valid version serves.
    again = Services.from_settings(settings)
    try:
        assert again.correction.id == good.id and len(again.index) == 10
    finally:
        again.close()
