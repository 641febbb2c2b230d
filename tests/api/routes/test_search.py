"""/search's modes over real HTTP: each mode ranks by its own list, says so, and refuses what it cannot do."""

from __future__ import annotations

import pytest

from tests.conftest import error_of

DOCS = [
    {"id": "heron", "text": "a grey heron waits by the river", "metadata": {"kind": "bird"}},
    {"id": "cat", "text": "the cat sleeps in the park", "metadata": {"kind": "pet"}},
    {"id": "dog", "text": "a dog runs in the park at night", "metadata": {"kind": "pet"}},
]


def test_each_mode_says_how_it_ranked_and_lexical_finds_only_shared_words(client):
    assert client.post("/documents", json={"documents": DOCS}).status_code == 201
    default = client.get("/search", params={"q": "herons waiting"}).json()
    assert default["ranking"]["mode"] == "hybrid" and default["ranking"]["chosen_by"].startswith("no judgments")
    assert default["ranking"]["fusion"] == "calibrated" and default["ranking"]["lexical_weight"] == 0.7
    lexical = client.post("/search", json={"q": "herons waiting", "mode": "lexical"}).json()
    assert [h["id"] for h in lexical["results"]] == ["heron"]  # stemmed: herons -> heron, waiting -> wait
    assert lexical["ranking"] == {
        "mode": "lexical",
        "fusion": None,
        "lexical_weight": None,
        "chosen_by": "request",
        "rrf_k": None,
        "candidates": 300,
        "confidence": None,
        "feedback": None,
    }
    hit = lexical["results"][0]
    assert hit["lexical_score"] > 0 and hit["rank_score"] == hit["lexical_score"] and -1 <= hit["score"] <= 1
    dense = client.get("/search", params={"q": "herons waiting", "mode": "dense"}).json()
    assert len(dense["results"]) == 3 and all(h["rank_score"] == h["score"] for h in dense["results"])
    pets = client.get("/search", params={"q": "park", "mode": "hybrid", "filter": '{"kind": "pet"}', "k": 1}).json()
    assert len(pets["results"]) == 1 and pets["results"][0]["metadata"] == {"kind": "pet"}


def test_an_unknown_mode_is_a_422_in_the_query_and_in_the_body(client):
    for r in (
        client.get("/search", params={"q": "cat", "mode": "sparse"}),
        client.post("/search", json={"q": "cat", "mode": "sparse"}),
    ):
        assert r.status_code == 422, r.text


def test_a_collection_keeps_its_own_ranking_and_lexical_settings(client):
    body = {"name": "plain", "search_mode": "lexical", "lexical_language": "none"}
    created = client.post("/collections", json=body)
    assert created.status_code == 201
    assert (created.json()["search_mode"], created.json()["lexical_language"]) == ("lexical", "none")
    assert client.post("/collections/plain/documents", json={"documents": DOCS}).status_code == 201
    found = client.get("/collections/plain/search", params={"q": "herons"}).json()
    assert found["ranking"]["mode"] == "lexical" and found["ranking"]["chosen_by"] == "settings"
    assert found["results"] == []  # no stemmer: "herons" is not "heron"
    assert client.get("/collections/plain/search", params={"q": "heron"}).json()["results"][0]["id"] == "heron"
    bad = client.post("/collections", json={"name": "bad", "lexical_language": "klingon"})
    assert bad.status_code == 422
    assert client.delete("/collections/plain").status_code == 204


def test_search_filters_on_metadata_and_drops_scores_below_the_threshold(client):
    docs = [
        {"id": f"{lang}-{i}", "text": text, "metadata": {"lang": lang, "n": i}}
        for lang in ("en", "fr")
        for i, text in enumerate(["the cat sleeps", "a dog runs at night", "the river sings quietly"])
    ]
    assert client.post("/documents", json={"documents": docs[:4]}).status_code == 201
    assert client.post("/documents", json={"documents": docs[4:]}).status_code == 201
    q = "the cat sleeps"
    everything = client.get("/search", params={"q": q, "k": 20}).json()["results"]
    assert len(everything) == 6
    french = client.get("/search", params={"q": q, "filter": '{"lang": "fr"}'}).json()["results"]
    assert {h["id"] for h in french} == {"fr-0", "fr-1", "fr-2"} and french[0]["id"] == "fr-0"
    both = client.post("/search", json={"q": q, "filter": {"lang": "en", "n": 1}}).json()["results"]
    assert [h["id"] for h in both] == ["en-1"]
    cut = sorted(h["score"] for h in everything)[-3]  # keeps the best three, and any tied with the third
    kept = client.post("/search", json={"q": q, "k": 20, "score_threshold": cut}).json()["results"]
    assert {h["id"] for h in kept} == {h["id"] for h in everything if h["score"] >= cut}
    assert 3 <= len(kept) < len(everything) and all(h["score"] >= cut for h in kept)
    assert client.post("/search", json={"q": q, "filter": {"lang": "de"}}).json()["results"] == []


@pytest.mark.parametrize(
    "params",
    [
        {"q": "x", "filter": "not json"},
        {"q": "x", "filter": "[1, 2]"},
        {"q": "x", "filter": '{"tags": ["a"]}'},
        {"q": "x", "filter": "{}"},
        {"q": "x", "score_threshold": 1.5},
    ],
)
def test_bad_filters_and_thresholds_are_422(client, params):
    assert "message" in error_of(client.get("/search", params=params), 422)


@pytest.mark.parametrize("params", [{"q": "x", "k": 0}, {"q": "x", "k": 21}, {"q": "x", "k": "ten"}, {"q": "  "}, {}])
def test_bad_search_parameters(client, params):
    error_of(client.get("/search", params=params), 422)
