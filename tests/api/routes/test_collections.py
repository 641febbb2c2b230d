"""Collections over real HTTP: created, listed, described and deleted; each searches only its own documents."""

from __future__ import annotations

import time

import numpy as np
import pytest

from app.backbones import build_backbone
from app.main import create_app
from tests.conftest import serve_app, until_loaded

CATS = ["the cat sleeps in the park", "a cat chases a mouse"]
PLANES = ["the plane flies over the city", "a jet lands at night"]


def add(client, path: str, texts: list[str], prefix: str) -> None:
    docs = [{"id": f"{prefix}{i}", "text": t} for i, t in enumerate(texts)]
    assert client.post(f"{path}/documents", json={"documents": docs}).status_code == 201


def ids(client, path: str, q: str) -> set[str]:
    return {h["id"] for h in client.get(f"{path}/search", params={"q": q, "k": 10}).json()["results"]}


def test_collections_are_created_listed_and_refused_clearly(client):
    created = client.post("/collections", json={"name": "cats", "pooling": "cls"})
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["name"], body["backbone"], body["pooling"], body["documents"]) == ("cats", "hashing", "cls", 0)
    assert body["state"] == "loading"  # its pooling was not loaded: answered at once, loaded in the background
    loaded = until_loaded(client, "cats")
    assert loaded["state"] == "ready" and loaded["open"]
    assert loaded["fingerprint"] != client.get("/info").json()["backbone"]["fingerprint"]  # another pooling
    assert client.post("/collections", json={"name": "cats"}).status_code == 409
    assert client.post("/collections", json={"name": "default"}).status_code == 409
    for bad in ["Cats", "-x", "a" * 65, "a b", ""]:
        r = client.post("/collections", json={"name": bad})
        assert r.status_code == 422 and r.json()["error"]["type"] in ("invalid_input", "validation_error"), bad
    assert client.post("/collections", json={"name": "x", "pooling": "max"}).status_code == 422
    assert client.post("/collections", json={"name": "x", "correction": "whitening-000000000000"}).status_code == 422
    assert client.post("/collections", json={"name": "x", "index_factory": "NotAFactory"}).status_code == 422
    assert client.post("/collections", json={"name": "x", "model_path": "a\u0000b"}).status_code == 422  # was a 500
    names = [c["name"] for c in client.get("/collections").json()["collections"]]
    assert names == ["default", "cats"]
    for path in ["/collections/nope", "/collections/nope/search?q=cat", "/collections/nope/documents/1"]:
        r = client.get(path)
        assert r.status_code == 404 and r.json()["error"]["type"] == "not_found", path
    assert client.post("/collections/nope/embed", json={"texts": ["a"]}).status_code == 404
    assert client.delete("/collections/default").status_code == 409


def test_each_collection_searches_only_its_own_documents_and_deleting_one_leaves_the_others(client, store):
    assert client.post("/collections", json={"name": "cats"}).status_code == 201
    assert client.post("/collections", json={"name": "planes", "pooling": "cls"}).status_code == 201
    add(client, "/collections/cats", CATS, "c")
    add(client, "/collections/planes", PLANES, "p")
    add(client, "", ["a river sings quietly"], "d")
    assert ids(client, "/collections/cats", "cat") == {"c0", "c1"}
    assert ids(client, "/collections/planes", "plane") == {"p0", "p1"}
    assert ids(client, "", "cat") == {"d0"}
    assert client.get("/collections/cats/documents/c0").json()["text"] == CATS[0]
    assert client.get("/collections/planes/documents/c0").status_code == 404
    # Same backbone, pooling and correction as the default collection: the same vectors.
    default = client.post("/embed", json={"texts": CATS}).json()
    cats = client.post("/collections/cats/embed", json={"texts": CATS}).json()
    assert cats["correction"] == default["correction"]
    np.testing.assert_allclose(cats["embeddings"], default["embeddings"], atol=1e-6)
    sim = client.post("/collections/planes/similarity", json={"pairs": [[PLANES[0], PLANES[0]]]}).json()
    assert sim["scores"] == [pytest.approx(1.0, abs=1e-5)]
    described = client.get("/collections/cats").json()
    assert described["documents"] == 2 and described["index"]["size"] == 2

    assert client.delete("/collections/cats").status_code == 204
    assert client.get("/collections/cats").status_code == 404
    assert client.delete("/collections/cats").status_code == 404
    assert not list(store.client.scan_iter(match=f"{store.prefix}:*collection:cats*"))  # nothing of it is left
    assert ids(client, "/collections/planes", "plane") == {"p0", "p1"} and ids(client, "", "cat") == {"d0"}
    assert client.post("/collections", json={"name": "cats"}).status_code == 201  # the name is free again
    assert ids(client, "/collections/cats", "cat") == set()


def test_a_collection_survives_a_restart_opened_from_redis(hashing_settings):
    with serve_app(create_app(hashing_settings)) as c:
        assert c.post("/collections", json={"name": "planes", "pooling": "cls"}).status_code == 201
        add(c, "/collections/planes", PLANES, "p")
    with serve_app(create_app(hashing_settings)) as c:  # a new process: the collection is read from Redis
        listed = c.get("/collections").json()["collections"][1]
        assert (listed["name"], listed["open"], listed["documents"], listed["pooling"]) == ("planes", False, 2, "cls")
        assert c.get("/info").json()["backbones_loaded"] == ["hashing/mean"]  # listing loaded nothing
        assert ids(c, "/collections/planes", "jet") == {"p0", "p1"}
        assert [x["name"] for x in c.get("/collections").json()["collections"]] == ["default", "planes"]


def test_a_backbone_the_server_was_not_told_to_serve_is_refused(client):
    r = client.post("/collections", json={"name": "x", "backbone": "huggingface"})
    assert r.status_code == 422 and "CE_COLLECTION_BACKBONES" in r.json()["error"]["message"]
    assert client.get("/collections/x").status_code == 404


def test_openai_clients_pick_a_collection_by_model(client):
    assert client.post("/collections", json={"name": "cats", "pooling": "cls"}).status_code == 201
    default_model = client.get("/info").json()["backbone"]["name"]
    assert [m["id"] for m in client.get("/v1/models").json()["data"]] == [default_model, "cats"]
    body = client.post("/v1/embeddings", json={"model": "cats", "input": CATS}).json()
    assert body["model"] == "cats"
    own = client.post("/collections/cats/embed", json={"texts": CATS}).json()["embeddings"]
    np.testing.assert_allclose([d["embedding"] for d in body["data"]], own, atol=1e-6)
    default = client.post("/v1/embeddings", json={"model": default_model, "input": CATS}).json()["data"]
    # the default's bundled whitening keeps 8 dims; no artifact is bundled for CLS pooling: 64 raw dims
    assert (len(default[0]["embedding"]), len(own[0]), body["data"][0]["index"]) == (8, 64, 0)
    r = client.post("/v1/embeddings", json={"model": "dogs", "input": "x"})
    assert r.status_code == 404 and "/v1/models" in r.json()["error"]["message"]


def test_metrics_report_each_open_collection(client):
    from tests.api.test_metrics import scrape

    assert client.post("/collections", json={"name": "cats", "pooling": "cls"}).status_code == 201
    add(client, "/collections/cats", CATS, "c")
    samples = scrape(client)
    assert samples[("ce_collection_documents", (("collection", "cats"),))] == 2
    assert samples[("ce_collection_documents", (("collection", "default"),))] == 0
    info = dict(next(k for k in samples if k[0] == "ce_collection_info" and ("collection", "cats") in k[1])[1])
    assert (info["backbone"], info["pooling"]) == ("hashing", "cls")


def test_a_collections_vectors_equal_a_single_collection_service_on_its_backbone(client, make_settings):
    assert client.post("/collections", json={"name": "cats", "pooling": "cls", "correction": "none"}).status_code == 201
    inside = client.post("/collections/cats/embed", json={"texts": CATS}).json()
    alone = make_settings(backbone="hashing", pooling="cls", correction="none")
    with serve_app(create_app(alone)) as single:
        own = single.post("/embed", json={"texts": CATS}).json()
    assert inside["model"] == own["model"] and inside["correction"] is own["correction"] is None
    np.testing.assert_allclose(inside["embeddings"], own["embeddings"], atol=1e-6)


def test_a_collection_on_a_local_model_folder_the_server_was_told_to_serve(make_settings, tiny_bert):
    settings = make_settings(backbone="hashing", collection_backbones=["huggingface"], collection_models=[tiny_bert])
    texts = ["the cat sat on the mat", "a plane flies fast", "red house green tree"]
    with serve_app(create_app(settings)) as c:
        refused = c.post("/collections", json={"name": "x", "backbone": "huggingface", "model_path": "/elsewhere"})
        assert refused.status_code == 422 and "CE_COLLECTION_MODELS" in refused.json()["error"]["message"]
        hashing = c.post("/collections", json={"name": "x", "model_path": str(tiny_bert)})
        assert hashing.status_code == 422 and "no model folder" in hashing.json()["error"]["message"]
        body = {"name": "tiny", "backbone": "huggingface", "model_path": str(tiny_bert), "correction": "none"}
        created = c.post("/collections", json=body)
        assert created.status_code == 201, created.text
        assert (created.json()["state"], created.json()["fingerprint"]) == ("loading", "")  # its backbone loads now
        loaded = until_loaded(c, "tiny")
        assert (loaded["state"], loaded["model_path"], loaded["dim"]) == ("ready", str(tiny_bert), 32)
        add(c, "/collections/tiny", texts, "t")
        hits = c.get("/collections/tiny/search", params={"q": "a plane flies fast", "k": 1}).json()["results"]
        assert hits[0]["id"] == "t1"
        own = build_backbone(settings.model_copy(update={"backbone": "huggingface", "model_path": tiny_bert}))
        want = own.encode(texts)
        want /= np.linalg.norm(want, axis=1, keepdims=True)
        got = c.post("/collections/tiny/embed", json={"texts": texts}).json()["embeddings"]
        np.testing.assert_allclose(got, want, atol=1e-5)
        assert "huggingface/mean (tiny-bert0)" in c.get("/info").json()["backbones_loaded"]


def test_a_collection_another_process_creates_after_a_404_is_served_at_once(client, hashing_settings):
    """A 404 is Redis's answer of the moment, not remembered: another replica may create the name next."""
    from app.services.container import Services

    assert client.get("/collections/late/search", params={"q": "cat"}).status_code == 404
    other = Services.from_settings(hashing_settings)  # another server process on the same Redis
    try:
        other.collections.create("late", correction="none")
    finally:
        other.close()
    assert client.get("/collections/late/search", params={"q": "cat"}).status_code == 200


def test_a_compressed_collection_re_scores_from_the_stored_vectors_at_its_own_depth(client):
    """IVF over 4-bit codes at the depth it was created with: every list probed, every candidate re-scored from the
    stored vectors, so its results are the exact index's, ids and cosines (hashing vectors differ too little for
    4-bit codes to rank them: without the re-rank they would not be)."""
    texts = [f"note {i} on topic {i % 7} filed under {i % 11} in box {i % 13}" for i in range(300)]
    made = client.post(
        "/collections",
        json={
            "name": "codes",
            "index_factory": "IVF4,PQ16x4fs",
            "index_probe": 4,
            "index_rerank": 300,
            "correction": "none",
        },
    )
    assert made.status_code == 201 and made.json()["index_rerank"] == 300
    exact = {"name": "exact", "index_factory": "Flat", "correction": "none"}  # raw: 64 dims, 16 codes of 4
    assert client.post("/collections", json=exact).status_code == 201
    for name in ("codes", "exact"):
        until_loaded(client, name)
        for start in range(0, len(texts), 8):  # CE_MAX_TEXTS here
            docs = [{"id": f"n{i}", "text": texts[i]} for i in range(start, min(start + 8, len(texts)))]
            assert client.post(f"/collections/{name}/documents", json={"documents": docs}).status_code == 201
    deadline = time.monotonic() + 60
    while (index := client.get("/collections/codes").json()["index"])["factory"] != "IVF4,PQ16x4fs":
        assert time.monotonic() < deadline, index  # served exactly until trained, then rebuilt in the background
        time.sleep(0.2)
    assert index["compressed"] and index["params"] == {"nprobe": 4, "rerank": 300}
    for q in ("note 5 on topic 5", "filed under 3 in box 9", "topic 6"):
        got, want = (
            client.get(f"/collections/{c}/search", params={"q": q, "k": 5, "mode": "dense"}).json()["results"]
            for c in ("codes", "exact")
        )
        assert [h["id"] for h in got] == [h["id"] for h in want]
        assert [h["score"] for h in got] == pytest.approx([h["score"] for h in want], abs=1e-6)
    assert client.post("/collections", json={"name": "bad", "index_rerank": 0}).status_code == 422
