"""The HTTP API over real HTTP, with the weight-free hashing backbone and a real Redis."""

import pytest

from tests.conftest import error_of


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/embed", {"texts": []}, 422),
        ("/embed", {"texts": [""]}, 422),
        ("/embed", {"texts": ["   "]}, 422),
        ("/embed", {"texts": [1, 2]}, 422),
        ("/embed", {"texts": "not a list"}, 422),
        ("/embed", {"texts": ["ok"], "extra": 1}, 422),
        ("/embed", {"texts": ["ok"], "normalize": "yes"}, 422),
        ("/embed", {"texts": ["x"] * 9}, 422),
        ("/embed", {"texts": ["x" * 201]}, 422),
        ("/similarity", {"pairs": [["a", "b"]] * 9}, 422),
        ("/embed", {}, 422),
        ("/similarity", {"pairs": [["only one"]]}, 422),
        ("/similarity", {"pairs": []}, 422),
        ("/similarity", {"source": "a"}, 422),
        ("/similarity", {"pairs": [["a", "b"]], "source": "a", "targets": ["b"]}, 422),
        ("/documents", {"documents": [{"text": ""}]}, 422),
        ("/documents", {"documents": [{"text": "ok", "id": ""}]}, 422),
        ("/documents", {"documents": [{"text": "ok", "colour": "red"}]}, 422),
        ("/search", {"q": "x", "k": 21}, 422),
        ("/search", {"q": "x", "filter": {"a": {"b": 1}}}, 422),
        ("/search", {"q": ""}, 422),
    ],
)
def test_bad_bodies_get_a_4xx_with_an_error_object(client, path, body, status):
    err = error_of(client.post(path, json=body), status)
    assert err["message"]


def test_malformed_json_and_unknown_routes(client):
    r = client.post("/embed", content=b"{not json", headers={"content-type": "application/json"})
    error_of(r, 422)
    r = client.post("/embed", content=b'{"texts": ["\xff\xfe"]}', headers={"content-type": "application/json"})
    assert 400 <= r.status_code < 500
    error_of(client.get("/nope"), 404)
    error_of(client.put("/embed", json={}), 405)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        ("InvalidInput", 422),
        ("BadRequest", 400),
        ("TooLarge", 413),
        ("Forbidden", 403),
        ("NotFound", 404),
        ("Conflict", 409),
        ("NotReady", 503),
        ("RequestTimeout", 504),
        ("Overloaded", 429),
        ("StoreUnavailable", 503),
        ("ArtifactError", 500),
        ("ServiceError", 500),
    ],
)
def test_the_one_table_maps_each_domain_error_to_its_status(error, status):
    from app.api.errors import headers_of, status_of
    from app.core import errors

    exc = getattr(errors, error)("what happened")
    assert status_of(exc) == status
    assert headers_of(exc) == ({"Retry-After": "1"} if error == "Overloaded" else None)


def test_an_error_kind_the_table_does_not_name_takes_its_base_status():
    from app.api.errors import headers_of, status_of
    from app.core.errors import NotReady

    class StillOpening(NotReady):
        pass

    assert status_of(StillOpening("x", retry_after=3)) == 503 and headers_of(StillOpening("x", retry_after=3)) == {
        "Retry-After": "3"
    }
