"""Per-request ranking over real HTTP: fusion, weight, rrf_k and depth set per request; explain shows each list's
rank and score and what the fused score took; offset pages through one larger answer; bad values are 422s."""

from __future__ import annotations

import pytest

DOCS = [
    {"id": f"d{i}", "text": f"note {i} about {w} and the park"}
    for i, w in enumerate(
        ["herons", "cats", "dogs", "rivers", "trees", "boats", "trains", "clouds", "stones", "bridges"] * 3
    )
]


@pytest.fixture
def filled(client):
    for start in range(0, len(DOCS), 8):
        assert client.post("/documents", json={"documents": DOCS[start : start + 8]}).status_code == 201
    return client


def test_a_request_sets_the_fusion_its_weight_rrf_k_and_the_depth(filled):
    asked = {"q": "herons in the park", "fusion": "rrf", "lexical_weight": 0.25, "rrf_k": 5, "candidates": 12}
    for answer in (filled.get("/search", params=asked), filled.post("/search", json=asked)):
        assert answer.status_code == 200, answer.text
        ranking = answer.json()["ranking"]
        assert ranking == {
            "mode": "hybrid",
            "fusion": "rrf",
            "lexical_weight": 0.25,
            "chosen_by": "request",
            "rrf_k": 5,
            "candidates": 12,
            "confidence": None,
            "feedback": None,
        }
    convex = filled.get("/search", params={"q": "herons", "fusion": "convex"}).json()["ranking"]
    assert (convex["fusion"], convex["lexical_weight"]) == ("convex", 0.4)  # a fusion named alone: its own weight


def test_explain_gives_each_lists_rank_and_score_and_parts_summing_to_the_fused_score(filled):
    found = filled.post("/search", json={"q": "herons in the park", "explain": True, "k": 5}).json()
    assert set(found["ranking"]["confidence"]) == {"dense", "lexical"}
    dense = [
        h
        for offset in (0, 15)
        for h in filled.post(
            "/search", json={"q": "herons in the park", "mode": "dense", "k": 15, "offset": offset}
        ).json()["results"]
    ]
    dense_rank = {h["id"]: n for n, h in enumerate(dense, 1)}
    for hit in found["results"]:
        told = hit["explain"]
        assert told["fused"]["dense"] + told["fused"]["lexical"] == pytest.approx(hit["rank_score"])
        if told["dense"] is not None:
            assert told["dense"]["rank"] == dense_rank[hit["id"]]
            assert told["dense"]["cosine"] == pytest.approx(hit["score"], abs=1e-5)
        if told["lexical"] is not None:
            assert (
                told["lexical"]["bm25"] == pytest.approx(hit["lexical_score"]) and 0 < told["lexical"]["coverage"] <= 1
            )
    assert found["results"][0]["explain"]["lexical"]["coverage"] == 1.0  # "herons" and "park": both held
    plain = filled.get("/search", params={"q": "herons"}).json()
    assert all(h["explain"] is None for h in plain["results"]) and plain["ranking"]["confidence"] is None


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_pages_equal_the_slices_of_one_larger_request(filled, mode):
    whole = filled.get("/search", params={"q": "notes about the park", "k": 20, "mode": mode}).json()["results"]
    pages = []
    for n in range(4):
        page = filled.get("/search", params={"q": "notes about the park", "k": 5, "offset": 5 * n, "mode": mode})
        pages += [h["id"] for h in page.json()["results"]]
    assert pages == [h["id"] for h in whole] and len(pages) == 20
    past = filled.post("/search", json={"q": "park", "k": 10, "offset": 29}).json()["results"]
    assert len(past) == 1  # 30 documents: the last one


@pytest.mark.parametrize(
    "bad, named",
    [
        ({"fusion": "max"}, "fusion"),
        ({"lexical_weight": 1.5}, "lexical_weight"),
        ({"lexical_weight": True}, "lexical_weight"),
        ({"rrf_k": 0}, "rrf_k"),
        ({"candidates": 5000}, "candidates"),
        ({"offset": -1}, "offset"),
        ({"offset": 9995, "k": 10}, "offset + k"),
        ({"explain": "yes"}, "explain"),
    ],
)
def test_an_invalid_ranking_value_is_a_422_naming_it(filled, bad, named):
    r = filled.post("/search", json={"q": "park", **bad})
    assert r.status_code == 422 and named in r.text, r.text
    if named != "explain" and not isinstance(next(iter(bad.values())), bool):  # a query string has no booleans
        g = filled.get("/search", params={"q": "park", **bad})
        assert g.status_code == 422 and named.split()[0] in g.text, g.text


def test_feedback_moves_the_query_toward_the_first_results_and_names_them(filled):
    plain = filled.post("/search", json={"q": "herons in the park", "k": 5}).json()
    assert plain["ranking"]["feedback"] is None
    served = filled.get("/info").json()["ranking"]
    assert (served["fusion"], served["lexical_weight"], served["feedback"]) == ("calibrated", 0.7, None)
    fed = filled.post("/search", json={"q": "herons in the park", "k": 5, "feedback": {"docs": 2}}).json()
    assert fed["ranking"]["feedback"] == {"docs": 2, "weight": 1.0, "from": [h["id"] for h in plain["results"][:2]]}
    assert fed["ranking"]["chosen_by"] == "request"
    got = filled.get("/search", params={"q": "herons in the park", "feedback": '{"docs": 2, "weight": 0.5}'}).json()
    assert got["ranking"]["feedback"]["weight"] == 0.5
    dense = filled.post("/search", json={"q": "herons", "mode": "dense", "feedback": {"docs": 1}}).json()
    assert dense["ranking"]["feedback"]["from"] == [plain_dense_first(filled)]
    lexical = filled.post("/search", json={"q": "herons", "mode": "lexical", "feedback": {"docs": 1}}).json()
    assert lexical["ranking"]["feedback"] is None  # no query vector to move


def plain_dense_first(client) -> str:
    return client.post("/search", json={"q": "herons", "mode": "dense", "k": 1}).json()["results"][0]["id"]


def test_a_collection_with_feedback_on_and_a_request_turning_it_off(client):
    assert (
        client.post("/collections", json={"name": "fed", "feedback_docs": 3, "feedback_weight": 0.5}).status_code == 201
    )
    assert client.post("/collections/fed/documents", json={"documents": DOCS[:8]}).status_code == 201
    on = client.get("/collections/fed/search", params={"q": "herons"}).json()["ranking"]
    assert (on["feedback"]["docs"], on["feedback"]["weight"], on["chosen_by"]) == (3, 0.5, "settings")
    off = client.post("/collections/fed/search", json={"q": "herons", "feedback": False}).json()["ranking"]
    assert off["feedback"] is None
    for bad in ({"docs": 0}, {"docs": 3, "weight": 0}, {"weight": 1.0}, True):
        r = client.post("/collections/fed/search", json={"q": "herons", "feedback": bad})
        assert r.status_code == 422 and "feedback" in r.text, r.text
    assert client.get("/search", params={"q": "x", "feedback": "{docs"}).status_code == 422
