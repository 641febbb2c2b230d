"""Documents in a real Redis: written with their change-log entry, read, iterated, replaced whole, deleted."""

from app.store import DocumentRecord
from app.store.keys import part_holding, partitioned, parts_of


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


def test_a_partitioned_collection_keeps_each_part_with_its_own_change_log(store):
    key = partitioned("collection:p:1", 3)
    docs = [DocumentRecord(f"d{i}", f"t{i}", "{}", b"v") for i in range(90)]
    store.documents.put(key, docs)
    assert store.documents.count(key) == 90
    assert store.documents.get(key, ["d5", "nope", "d80"]) == [docs[5], None, docs[80]]
    assert sorted(i for ids in store.documents.ids(key) for i in ids) == sorted(d.id for d in docs)
    for part in parts_of(key):  # each part logs only its own documents
        (change,) = store.changes.after(part, "0-0")[0]
        assert change.doc_ids and all(part_holding(key, d) == part for d in change.doc_ids)
    assert sum(store.documents.count(part) for part in parts_of(key)) == 90
    assert store.documents.delete(key, ["d1", "d2", "d3", "missing"])[0] == 3
    assert store.documents.count(key) == 87
    assert store.drop_collection(key) == 87
    assert store.documents.count(key) == 0 and all(store.changes.last_id(p) == "0-0" for p in parts_of(key))
