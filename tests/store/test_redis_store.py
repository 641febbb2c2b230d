"""The store against a real redis-server: artifacts, documents, atomicity and failures."""

import time

import pytest

from app.core.errors import StoreUnavailable
from app.store import DocumentRecord, EmbeddedRedis, RedisStore


def test_artifact_versions_and_current_pointer(store):
    assert store.artifacts.current_id("fp") is None
    store.artifacts.put("fp", "v1", b"one", make_current=True)
    store.artifacts.put("fp", "v2", b"two", make_current=False)
    assert store.artifacts.current_id("fp") == "v1"
    assert store.artifacts.get("fp", "v2") == b"two"
    assert store.artifacts.versions("fp") == ["v1", "v2"]
    assert store.artifacts.current_id("other-fp") is None


def test_documents_put_get_iterate_delete(store):
    docs = [DocumentRecord(f"id{i}", f"text {i}", f'{{"n": {i}}}', i.to_bytes(4, "little") * 2) for i in range(2500)]
    store.documents.put("books", docs)
    assert store.documents.count("books") == 2500
    got = store.documents.get("books", ["id7", "missing"])
    assert got[0] == docs[7] and got[1] is None
    seen = {d.id: d for batch in store.documents.scan("books", batch=300) for d in batch}
    assert len(seen) == 2500 and seen["id2499"].vector == (2499).to_bytes(4, "little") * 2
    assert store.documents.delete("books", ["id1", "id1", "nope"])[0] == 1
    assert store.documents.count("books") == 2499
    assert store.documents.count("films") == 0


def test_every_write_is_logged_in_commit_order(store):
    assert store.changes.last_id("s") == "0-0"
    first = store.documents.put("s", [DocumentRecord("a", "t", "{}", b""), DocumentRecord("b", "t", "{}", b"")])
    existed, second = store.documents.delete("s", ["a", "zzz"])
    assert existed == 1 and store.changes.last_id("s") == second
    changes, _ = store.changes.after("s", "0-0")
    assert [(c.id, c.op, c.doc_ids) for c in changes] == [
        (first, "upsert", ["a", "b"]),
        (second, "delete", ["a", "zzz"]),
    ]
    assert [c.id for c in store.changes.after("s", first)[0]] == [second]
    assert store.changes.after("other", "0-0") == ([], "0-0")


def test_trimming_the_log_is_remembered_and_never_moves_back(store):
    ids = [store.documents.put("s", [DocumentRecord(str(i), "t", "{}", b"")]) for i in range(3)]
    assert store.changes.trim("s", ids[1])
    changes, trimmed = store.changes.after("s", "0-0")
    assert [c.id for c in changes] == ids[1:] and trimmed == ids[1] == store.changes.trimmed_through("s")
    assert not store.changes.trim("s", ids[0])  # a replica snapshotting at an older position
    assert store.changes.trimmed_through("s") == ids[1]
    assert store.changes.trim("s", ids[2]) and store.changes.trimmed_through("s") == ids[2]


def test_replica_positions_expire(store):
    store.replicas.report("s", "r1", "5-0", ttl=0.3)
    store.replicas.report("s", "r2", "7-0", ttl=30)
    store.replicas.report("other", "r3", "1-0", ttl=30)
    assert sorted(store.replicas.live("s")) == ["5-0", "7-0"]
    time.sleep(0.5)
    assert store.replicas.live("s") == ["7-0"]
    store.replicas.forget("s", "r2")
    assert store.replicas.live("s") == []


def test_replacing_a_document_leaves_no_stale_fields(store):
    store.documents.put("s", [DocumentRecord("a", "old", "{}", b"\x00" * 4)])
    store.documents.put("s", [DocumentRecord("a", "new", '{"v": 2}', b"\x01" * 4)])
    assert store.documents.get("s", ["a"])[0] == DocumentRecord("a", "new", '{"v": 2}', b"\x01" * 4)
    assert store.documents.count("s") == 1


def test_data_survives_a_redis_restart(tmp_path):
    server = EmbeddedRedis(tmp_path / "r")
    s = RedisStore.from_url(server.start())
    s.documents.put("s", [DocumentRecord("kept", "text", "{}", b"abcd")])
    s.close()
    server.stop()
    again = EmbeddedRedis(tmp_path / "r")
    s = RedisStore.from_url(again.start())
    try:
        assert s.documents.get("s", ["kept"])[0].text == "text"
    finally:
        s.close()
        again.stop()


def test_unreachable_redis_raises_store_unavailable(tmp_path):
    s = RedisStore.from_url(f"unix://{tmp_path}/no-such.sock")
    assert s.ping() is False
    with pytest.raises(StoreUnavailable, match="redis unavailable"):
        s.documents.put("s", [DocumentRecord("a", "t", "{}", b"")])
    assert StoreUnavailable.status == 503
