"""Snapshots: one that does not match the store is rebuilt, never served; writers snapshotting at once do not
collide."""

from __future__ import annotations

import threading

from app.services.container import Services
from app.services.documents import DocumentInput
from tests.conftest import CORPUS
from tests.index.test_live import docs, fitted


def test_a_snapshot_that_does_not_match_is_rebuilt_not_served(settings, backbone, store):
    service = Services.from_settings(settings)
    service.documents.add(docs(40))
    service.close()  # writes the snapshot
    snapshot = service.served.snapshots.path
    assert snapshot.exists()

    # Another correction is current now: the snapshot's vectors live in the old space.
    artifact = fitted(backbone, 0.5, 8)
    with_correction = settings
    from app.correction.publication import publish

    publish(store, artifact)
    other = Services.from_settings(with_correction)
    try:
        opened = other.info()["index"]["opened"]
        assert opened["from"] == "store" and "serving " + artifact.id in opened["snapshot_refused"]
        assert other.index.dim == 8 and len(other.index) == 40
    finally:
        other.close()

    snapshot.write_bytes(snapshot.read_bytes()[:-100])  # truncated on disk
    again = Services.from_settings(with_correction)
    try:
        assert again.info()["index"]["opened"]["from"] == "store" and len(again.index) == 40
    finally:
        again.close()

    store.client.delete(f"{store.prefix}:store-id")  # as if Redis had been replaced by another dataset
    fresh = Services.from_settings(with_correction)
    try:
        assert "another Redis dataset" in fresh.info()["index"]["opened"]["snapshot_refused"]
    finally:
        fresh.close()


def test_writers_snapshotting_at_once_each_use_their_own_temporary_file(settings):
    """The follower, a rebuild and shutdown may all write the snapshot; no writer may rename another's file."""
    services = Services.from_settings(settings)
    try:
        services.documents.add([DocumentInput(id=f"d{i}", text=t) for i, t in enumerate(CORPUS[:20])])
        snapshots = services.served.snapshots
        errors = []

        def write_many():
            try:
                for _ in range(30):
                    with services.served.writing() as space:
                        data, state = snapshots.capture(space)
                    snapshots.write(data, state)
            except Exception as exc:  # collected: the assertion below names it
                errors.append(exc)

        writers = [threading.Thread(target=write_many) for _ in range(3)]
        for w in writers:
            w.start()
        for w in writers:
            w.join()
        assert errors == []
        assert not list(snapshots.path.parent.glob("*.tmp"))
        loaded = snapshots.load(services.correction, services.served.builder)
        assert len(loaded.dense) == 20 and len(loaded.lexical) == 20
        loaded.close()
    finally:
        services.close()
