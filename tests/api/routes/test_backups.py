"""/export and /import over real HTTP: JSON lines both ways; a body that is not lines of JSON, or whose first line is
not the collection's, is a 422 naming it."""

from __future__ import annotations

import json

from tests.conftest import error_of


def test_an_export_imported_under_another_name_keeps_documents_and_vectors(client):
    docs = [{"id": f"d{i}", "text": f"the cat number {i} sleeps", "metadata": {"i": i}} for i in range(5)]
    assert client.post("/collections", json={"name": "src"}).status_code == 201
    assert client.post("/collections/src/documents", json={"documents": docs}).status_code == 201
    exported = client.get("/collections/src/export")
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in exported.text.splitlines()]
    assert [line["kind"] for line in lines] == ["collection", "correction", *["document"] * 5, "end"]
    answer = client.post(
        "/collections/copy/import", content=exported.content, headers={"content-type": "application/x-ndjson"}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json() | {"correction": None} == {
        "collection": "copy",
        "from_vectors": 5,
        "encoded": 0,
        "skipped": 0,
        "created": True,
        "correction": None,
    }
    assert client.get("/collections/copy/documents/d3").json()["metadata"] == {"i": 3}
    again = client.post("/collections/copy/import", content=exported.content)  # resumed: everything is stored
    assert (again.json()["skipped"], again.json()["from_vectors"]) == (5, 0)


def test_bodies_that_are_not_an_export_are_refused(client):
    assert client.post("/collections", json={"name": "t"}).status_code == 201
    not_json = client.post("/collections/t/import", content=b'{"kind": "collection"\nnot json\n')
    assert "JSON" in error_of(not_json, 422)["message"]
    doc = {"kind": "document", "id": "d", "text": "x"}
    first_not_collection = client.post("/collections/t/import", content=json.dumps(doc).encode())
    assert error_of(first_not_collection, 422)["message"] == "an import starts with the export's collection line"


def test_an_import_reads_one_object_a_line_and_the_default_refuses_other_settings(client):
    assert client.post("/collections", json={"name": "src", "pooling": "cls"}).status_code == 201
    assert client.post("/collections/src/documents", json={"documents": [{"id": "a", "text": "x"}]}).status_code == 201
    lines = client.get("/collections/src/export").text.splitlines()
    other = client.post("/collections/default/import", content="\n".join(lines).encode())
    assert "pooling 'cls'" in error_of(other, 409)["message"]
    doc = {"kind": "document", "id": "b", "text": "y"}
    joined = [lines[0], json.dumps(doc) + "," + json.dumps({**doc, "id": "c"})]
    assert (
        "line 2" in error_of(client.post("/collections/t2/import", content="\n".join(joined).encode()), 422)["message"]
    )
    bad = [lines[0], json.dumps({**doc, "passages": "[[0, 1], [0, 1]]"})]
    refused = client.post("/collections/t3/import", content="\n".join(bad).encode())
    assert "line 2" in error_of(refused, 422)["message"] and "passages" in refused.text
    assert client.get("/collections/t3").status_code == 404  # refused before anything was written
