"""The HTTP API over real HTTP, with the weight-free hashing backbone and a real Redis."""

import pytest

from tests.conftest import error_of


def test_documents_search_get_delete(client):
    docs = [
        {"id": "cat", "text": "the cat sleeps in the park", "metadata": {"kind": "animal"}},
        {"id": "plane", "text": "the plane flies over the city"},
        {"text": "a child reads with joy"},
    ]
    r = client.post("/documents", json={"documents": docs})
    assert r.status_code == 201
    ids = r.json()["ids"]
    assert ids[:2] == ["cat", "plane"] and len(ids[2]) == 16
    hit = client.get("/search", params={"q": "the plane flies over the city", "k": 2}).json()
    assert [h["id"] for h in hit["results"]][0] == "plane"
    assert hit["results"][0]["score"] == pytest.approx(1.0, abs=1e-4) and hit["correction"]
    assert client.get("/documents/cat").json() == {
        "id": "cat",
        "text": "the cat sleeps in the park",
        "metadata": {"kind": "animal"},
    }
    assert client.delete("/documents/plane").status_code == 204
    after = client.get("/search", params={"q": "the plane flies over the city", "k": 10}).json()
    assert "plane" not in [h["id"] for h in after["results"]] and len(after["results"]) == 2
    error_of(client.delete("/documents/plane"), 404)
    error_of(client.get("/documents/plane"), 404)
    assert client.get("/info").json()["index"]["size"] == 2


def test_same_text_twice_is_one_document(client):
    first = client.post("/documents", json={"documents": [{"text": "a dog sings"}]}).json()["ids"]
    again = client.post("/documents", json={"documents": [{"text": "a dog sings"}, {"text": "a dog sings"}]})
    assert again.json()["ids"] == first
    assert client.get("/info").json()["index"]["size"] == 1


def verified(client) -> dict:
    """The default collection's store and indexes compared: no document missing or extra anywhere."""
    report = client.post("/collections/default/verify").json()
    assert report["ok"] and report["dense"]["missing"] == report["dense"]["extra"] == 0, report
    return report


def test_documents_as_a_set_listed_counted_read_deleted_and_relabelled_with_the_indexes_equal(client):
    docs = [
        {"id": f"d{i:02d}", "text": f"note {i} about rivers", "metadata": {"n": i, "odd": i % 2 == 1}}
        for i in range(30)
    ]
    for start in range(0, 30, 8):
        assert client.post("/documents", json={"documents": docs[start : start + 8]}).status_code == 201
    pages, cursor = [], None
    while True:
        page = client.get("/documents", params={"limit": 7} | ({"cursor": cursor} if cursor else {})).json()
        pages.append([d["id"] for d in page["documents"]])
        if (cursor := page["next_cursor"]) is None:
            break
    assert [len(p) for p in pages] == [7, 7, 7, 7, 2] and sum(pages, []) == [d["id"] for d in docs]
    odd = client.get("/documents", params={"filter": '{"odd": true, "n": {"$lt": 10}}'}).json()
    assert [d["id"] for d in odd["documents"]] == ["d01", "d03", "d05", "d07", "d09"] and odd["next_cursor"] is None
    assert client.post("/documents/count", json={}).json() == {"count": 30}
    assert client.post("/documents/count", json={"filter": {"n": {"$gte": 25}}}).json() == {"count": 5}
    found = client.post("/documents/get", json={"ids": ["d05", "nope", "d01"]}).json()
    assert [d["id"] for d in found["documents"]] == ["d05", "d01"] and found["missing"] == ["nope"]
    assert found["documents"][0] == {"id": "d05", "text": "note 5 about rivers", "metadata": {"n": 5, "odd": True}}
    assert client.post("/documents/delete", json={"ids": ["d00", "d01", "gone"]}).json() == {"deleted": 2}
    verified(client)
    assert client.post("/documents/delete", json={"filter": {"n": {"$gte": 20}}}).json() == {"deleted": 10}
    assert client.post("/documents/count", json={}).json() == {"count": 18}
    verified(client)
    relabelled = client.post("/documents/metadata", json={"documents": [{"id": "d02", "metadata": {"n": 99}}]})
    assert relabelled.json() == {"ids": ["d02"]}
    merged = {"documents": [{"id": "d03", "metadata": {"tag": "x"}}], "merge": True}
    assert client.post("/documents/metadata", json=merged).status_code == 200
    assert client.get("/documents/d02").json()["metadata"] == {"n": 99}
    assert client.get("/documents/d03").json()["metadata"] == {"n": 3, "odd": True, "tag": "x"}
    hits = client.post("/search", json={"q": "note 2 about rivers", "filter": {"n": 99}}).json()["results"]
    assert [h["id"] for h in hits] == ["d02"]
    assert verified(client)["stored"] == 18


@pytest.mark.parametrize(
    ("path", "body", "says"),
    [
        ("/documents/delete", {}, "send ids or filter"),
        ("/documents/delete", {"ids": ["a"], "filter": {"n": 1}}, "send ids or filter"),
        ("/documents/count", {"filter": {"n": {"$near": 1}}}, "unknown operator $near at n"),
        ("/documents/get", {"ids": []}, "at least 1 item"),
        ("/documents/metadata", {"documents": []}, "at least 1 item"),
    ],
)
def test_set_operations_refuse_what_they_cannot_do_in_one_line(client, path, body, says):
    message = error_of(client.post(path, json=body), 422)["message"]
    assert says in message and "\n" not in message


def test_relabelling_a_missing_document_is_a_404_and_writes_nothing(client):
    assert (
        client.post(
            "/documents", json={"documents": [{"id": "a", "text": "a heron", "metadata": {"k": 1}}]}
        ).status_code
        == 201
    )
    body = {"documents": [{"id": "a", "metadata": {"k": 2}}, {"id": "missing", "metadata": {}}]}
    assert "missing" in error_of(client.post("/documents/metadata", json=body), 404)["message"]
    assert client.get("/documents/a").json()["metadata"] == {"k": 1}
    assert "not JSON" in error_of(client.get("/documents", params={"filter": "{"}), 422)["message"]


def test_a_metadata_merge_is_held_to_the_limits_a_whole_metadata_is(client):
    assert client.post("/documents", json={"documents": [{"id": "m", "text": "x", "metadata": {}}]}).status_code == 201
    for part in range(2):
        keys = {f"k{part}-{i}": "v" * 100 for i in range(32)}
        merged = client.post("/documents/metadata", json={"documents": [{"id": "m", "metadata": keys}], "merge": True})
        assert merged.status_code == 200, merged.text
    third = client.post("/documents/metadata", json={"documents": [{"id": "m", "metadata": {"k": 1}}], "merge": True})
    assert "at most 64" in error_of(third, 422)["message"]
    assert len(client.get("/documents/m").json()["metadata"]) == 64  # nothing written
