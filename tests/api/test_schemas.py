"""Input no field may hold is a 422 naming where it is: lone surrogates, non-finite numbers, a boolean for k, and
index factories the service cannot build or train."""

from __future__ import annotations

import pytest

from tests.conftest import error_of

LONE = '"a \\ud800 b"'  # JSON's escape of a lone surrogate: valid JSON, not Unicode text


@pytest.mark.parametrize(
    ("method", "path", "body", "where"),
    [
        ("POST", "/embed", f'{{"texts": ["fine", {LONE}]}}', "texts.1"),
        ("POST", "/similarity", f'{{"pairs": [["fine", {LONE}]]}}', "pairs.0.1"),
        ("POST", "/similarity", f'{{"source": {LONE}, "targets": ["b"]}}', "source"),
        ("POST", "/v1/embeddings", f'{{"model": "hashing", "input": [{LONE}]}}', "input.0"),
        ("POST", "/documents", f'{{"documents": [{{"text": {LONE}}}]}}', "documents.0.text"),
        ("POST", "/documents", f'{{"documents": [{{"text": "ok", "id": {LONE}}}]}}', "documents.0.id"),
        (
            "POST",
            "/documents",
            f'{{"documents": [{{"text": "ok", "metadata": {{"k": {LONE}}}}}]}}',
            "documents.0.metadata.k",
        ),
        ("POST", "/search", f'{{"q": {LONE}}}', "q"),
        ("POST", "/search", f'{{"q": "x", "filter": {{{LONE}: 1}}}}', "filter.a \\ud800 b"),
        ("POST", "/collections", f'{{"name": {LONE}}}', "name"),
    ],
)
def test_a_lone_surrogate_is_a_422_naming_the_field(client, method, path, body, where):
    r = client.request(method, path, content=body.encode(), headers={"content-type": "application/json"})
    message = error_of(r, 422)["message"]
    assert f"{where} holds a lone surrogate" in message


def test_a_lone_surrogate_in_the_get_filter_is_a_422(client):
    r = client.get("/search", params={"q": "x", "filter": f'{{"k": {LONE}}}'})
    assert "filter.k holds a lone surrogate" in error_of(r, 422)["message"]


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_filter_values_must_be_finite(client, value):
    where = f'{{"score": {value}}}'
    r = client.post("/search", content=f'{{"q": "x", "filter": {where}}}', headers={"content-type": "application/json"})
    assert "filter.score is" in error_of(r, 422)["message"]
    assert "must be finite" in error_of(client.get("/search", params={"q": "x", "filter": where}), 422)["message"]


def test_metadata_numbers_must_be_finite(client):
    body = b'{"documents": [{"text": "ok", "metadata": {"w": NaN}}]}'
    r = client.post("/documents", content=body, headers={"content-type": "application/json"})
    assert "documents.0.metadata.w is nan" in error_of(r, 422)["message"]


@pytest.mark.parametrize("k", [True, False, 2.0, "3"])
def test_k_in_a_body_is_an_integer(client, k):
    assert error_of(client.post("/search", json={"q": "x", "k": k}), 422)["message"].startswith("body.k")


@pytest.mark.parametrize(
    ("factory", "reason"),
    [
        ("IDMap,Flat", "'IDMap,Flat' is not one of the index structures served here"),
        ("IVF10000000,Flat", "IVF's lists 10000000 is out of bounds: 1 to 65,536"),
        ("NoSuchThing", "index_factory: 'NoSuchThing' is not one of the index structures served here"),
        ("HNSW0", "HNSW's M 0 is out of bounds: 4 to 128"),  # FAISS aborted the process once vectors were added
        ("HNSW1", "HNSW's M 1 is out of bounds"),  # FAISS segfaulted creating it
        ("IVF4,PQ7", "PQ7: a product quantizer's sub-quantizers must divide the dimension"),
    ],
)
def test_index_factories_the_service_cannot_serve_are_refused_at_creation(client, factory, reason):
    r = client.post("/collections", json={"name": "c1", "index_factory": factory})
    assert reason in error_of(r, 422)["message"]
    assert client.get("/collections/c1").status_code == 404
