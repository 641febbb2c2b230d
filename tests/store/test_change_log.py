"""The change log in a real Redis: every write in commit order, trimmed only forward."""

from app.store import DocumentRecord


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
