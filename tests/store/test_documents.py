"""Documents in a real Redis: written with their change-log entry, read, iterated, replaced whole, deleted."""

from app.store import DocumentRecord


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


def test_replacing_a_document_leaves_no_stale_fields(store):
    store.documents.put("s", [DocumentRecord("a", "old", "{}", b"\x00" * 4)])
    store.documents.put("s", [DocumentRecord("a", "new", '{"v": 2}', b"\x01" * 4)])
    assert store.documents.get("s", ["a"])[0] == DocumentRecord("a", "new", '{"v": 2}', b"\x01" * 4)
    assert store.documents.count("s") == 1
