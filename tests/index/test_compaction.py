"""The lexical index rebuilt beside live writes: every write made during the rebuild, this process's own included,
is in the index it swaps in, and the compacted index is what the next start loads."""

from __future__ import annotations

import pytest

from app.index.compaction import compact
from app.services.container import Services
from app.services.documents import DocumentInput
from tests.conftest import CORPUS


@pytest.fixture
def service(make_settings):
    settings = make_settings(backbone="hashing", follow_interval=3600, snapshot_interval=3600)
    service = Services.from_settings(settings)
    yield service
    service.close()


def docs(n):
    return [DocumentInput(text=f"{CORPUS[i % len(CORPUS)]} number{i}", id=f"d{i}") for i in range(n)]


def lexical_ids(service) -> set[str]:
    return set(service.served.current.lexical.ids())


def stored_ids(service) -> set[str]:
    return {d for ids in service.store.documents.ids(service.served.collection_key) for d in ids}


def writes_during_the_scan(service, monkeypatch, write):
    """Run `write` once the compaction has read the store, before it swaps: as a request arriving then would."""
    documents = service.store.documents
    scan = documents.scan

    def scan_then_write(collection_key, batch=1000):
        yield from scan(collection_key, batch)
        write()

    monkeypatch.setattr(documents, "scan", scan_then_write)


def test_own_writes_during_a_compaction_are_in_the_compacted_lexical_index(service, monkeypatch):
    service.documents.add(docs(20))
    service.documents.delete("d0")  # a dead version: what makes a compaction due
    live = service.served

    def write():
        service.documents.add([DocumentInput(text="a zygomorphic orchid", id="new")])
        service.documents.delete("d1")

    writes_during_the_scan(service, monkeypatch, write)
    assert compact(live.builder, live.current, live._lock, lambda: live.current)
    monkeypatch.undo()
    live.follow_once()
    assert lexical_ids(service) == stored_ids(service) == {f"d{i}" for i in range(2, 20)} | {"new"}
    assert [hit for hit, _ in live.current.lexical.search("zygomorphic", 5)] == ["new"]


def test_a_compacted_index_is_snapshotted_and_a_restart_loads_it(make_settings):
    settings = make_settings(backbone="hashing", follow_interval=3600, snapshot_interval=3600)
    service = Services.from_settings(settings)
    try:
        service.documents.add(docs(10))
        service.served.snapshot()
        service.documents.delete("d0")
        service.served.snapshot()
        live = service.served
        for _ in range(4):  # the follower's steps: writes have paused, so the compaction is due on the last
            live.follow_once()
        assert live.current.lexical.dead == 0
        saved = live.snapshots.load(live.current.correction, live.builder)
        try:
            assert saved.lexical.dead == 0 and set(saved.lexical.ids()) == {f"d{i}" for i in range(1, 10)}
        finally:
            saved.close()
    finally:
        service.close()
