"""The store against both indexes: drift is found by id (or by count), named, refused at load and rebuilt away."""

from __future__ import annotations

import pytest

from app.index.integrity import Drift, drift_of
from app.index.passages import passage_key
from app.services.container import Services
from app.services.documents import DocumentInput
from tests.conftest import CORPUS


def test_drift_names_missing_and_extra_documents_and_passages():
    expected = {"a": 1, "b": 3, "c": 1}
    held = ["a", "b", passage_key("b", 1), passage_key("b", 5), "gone"]
    assert drift_of(expected, held, set()) == Drift(missing=2, extra=2, examples=("b", "c", "b", "gone"))
    assert drift_of(expected, ["a", "b", passage_key("b", 1), passage_key("b", 2), "c"], set()) == Drift()


def test_documents_written_after_the_comparison_point_are_left_out():
    assert drift_of({"a": 1, "new": 1}, ["a", "deleted"], {"new", "deleted"}) == Drift()


def test_an_id_held_twice_is_extra():
    assert drift_of({"a": 1}, ["a", "a"], set()) == Drift(extra=1, examples=("a",))


@pytest.fixture
def settings(make_settings):
    return make_settings(backbone="hashing", follow_interval=3600, snapshot_interval=3600)


def docs(n):
    return [DocumentInput(text=f"{CORPUS[i % len(CORPUS)]} number{i}", id=f"d{i}") for i in range(n)]


def long_doc(doc_id):
    return DocumentInput(text=" ".join(f"Sentence {i} is about gardens and rivers." for i in range(80)), id=doc_id)


def swap_a_lexical_document(service):
    """The drift the old compaction left: one acknowledged document missing, one deleted document left over."""
    lexical = service.served.current.lexical
    lexical.remove(["d1"])
    lexical.upsert(["ghost"], ["a document the store never had"])
    lexical.commit()


@pytest.fixture
def service(settings):
    service = Services.from_settings(settings)
    yield service
    service.close()


def test_verify_finds_drift_in_each_index_and_the_follower_rebuilds_it(service):
    service.documents.add([*docs(30), long_doc("long")])
    live = service.served
    clean = live.verify()
    assert clean.drift == 0 and clean.full and clean.stored == 31
    swap_a_lexical_document(service)
    assert live.verify(full=False).drift == 0  # counts agree here: only ids tell
    live.current.dense.remove([passage_key("long", 2)])
    found = live.verify()
    assert found.dense.describe() == {"missing": 1, "extra": 0, "examples": ["long"]}
    assert found.lexical.describe() == {"missing": 1, "extra": 1, "examples": ["d1", "ghost"]}
    live._verified_at = 0.0  # a full check is due
    live.follow_once()
    live._rebuild.result(30)
    assert live.verify().drift == 0
    assert live.status()["integrity"]["ok"] is True


def test_a_snapshot_whose_ids_differ_from_the_store_is_refused_though_its_counts_agree(settings):
    service = Services.from_settings(settings)
    try:
        service.documents.add(docs(20))
        swap_a_lexical_document(service)
    finally:
        service.close()  # the snapshot written at shutdown holds the drifted lexical index
    again = Services.from_settings(settings)
    try:
        opened = again.served.opened
        assert opened["from"] == "store" and "lexical: 1 missing, 1 extra" in opened["snapshot_refused"]
        assert again.served.verify().drift == 0
    finally:
        again.close()


def test_counts_name_drift_when_writes_have_paused(service):
    service.documents.add(docs(5))
    service.served.current.lexical.remove(["d0"])
    service.served.current.lexical.commit()
    check = service.served.verify(full=False)
    assert (check.full, check.stored, check.dense.count, check.lexical.describe()) == (
        False,
        5,
        0,
        {"missing": 1, "extra": 0, "examples": []},
    )
