"""/search over real HTTP: each mode ranks by its own list, says so, and refuses what it cannot do; random filters
over random metadata give, in every mode and on every index kind, exactly the documents the plain evaluation
selects, ranked as the unfiltered search restricted to them; MMR, search by vector and vectors in results."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.index.metadata_filter import matches, parse
from tests.conftest import CORPUS, error_of, serve_app
from tests.index.test_metadata_filter import filters

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


WORDS = "heron river cat park dog night rain sun tree boat".split()
N = 60
KINDS = {"flat": "Flat", "hnsw": "HNSW16", "ivf": "IVF2,Flat", "ivfpq": "IVF2,PQ4"}


def random_metadata(rng: random.Random) -> dict:
    """Nested objects, lists, numbers, strings, booleans, null and missing fields, as the filter strategy names."""

    def value(depth: int = 0):
        pick = rng.random()
        if pick < 0.15 and depth < 2:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        if pick < 0.3 and depth < 2:
            return {k: value(depth + 1) for k in rng.sample("abc", rng.randint(0, 2))}
        return rng.choice([None, True, False, -3, -1, 0, 1, 2, 3, 0.5, 2.0, -1.5, "x", "y", "z"])

    return {k: value() for k in rng.sample("abc", rng.randint(0, 3))}


@pytest.fixture
def store(hashing_settings):
    """A service allowed k = N, one collection per index kind, each holding the same N documents."""
    from app.main import create_app

    rng = random.Random(5)
    docs = [
        {"id": f"d{i:02d}", "text": " ".join(rng.choices(WORDS, k=rng.randint(3, 8))), "metadata": random_metadata(rng)}
        for i in range(N)
    ]
    with serve_app(create_app(hashing_settings.model_copy(update={"max_k": N}))) as client:
        for name, factory in KINDS.items():
            assert client.post("/collections", json={"name": name, "index_factory": factory}).status_code == 201
            for start in range(0, N, 8):
                posted = client.post(f"/collections/{name}/documents", json={"documents": docs[start : start + 8]})
                assert posted.status_code == 201, posted.text
        yield client, {d["id"]: d["metadata"] for d in docs}


def ids(client, name: str, body: dict) -> list[str]:
    answer = client.post(f"/collections/{name}/search", json={"k": N, **body})
    assert answer.status_code == 200, answer.text
    return [h["id"] for h in answer.json()["results"]]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=filters, query=st.sampled_from(["heron river", "cat park night", "rain"]))
def test_a_filtered_search_returns_exactly_what_the_filter_selects_ranked_as_the_unfiltered_one(store, where, query):
    client, metadata = store
    selected = {d for d, m in metadata.items() if matches(parse(where), m)}
    for name in KINDS:
        for mode in ("dense", "lexical", "hybrid"):
            unfiltered = ids(client, name, {"q": query, "mode": mode})
            found = ids(client, name, {"q": query, "mode": mode, "filter": where})
            # Lexical lists only documents holding a query word; Flat is exact and IVF-PQ re-ranks on stored vectors.
            if mode == "lexical" or (mode == "dense" and name in ("flat", "ivfpq")):
                assert found == [d for d in unfiltered if d in selected], (name, where)
            else:
                assert sorted(found) == sorted(selected), (name, mode, where)


def test_mmr_reorders_toward_diversity_and_lambda_one_keeps_the_ranking(client):
    docs = [{"id": f"dup{i}", "text": "the grey heron waits by the river"} for i in range(4)]
    docs += [{"id": "cat", "text": "a heron and a cat"}, {"id": "boat", "text": "a boat on the river"}]
    assert client.post("/documents", json={"documents": docs}).status_code == 201
    plain = ids(client, "default", {"q": "grey heron river", "mode": "dense", "k": 6})
    kept = ids(client, "default", {"q": "grey heron river", "mode": "dense", "k": 6, "mmr": {"lambda": 1}})
    diverse = ids(client, "default", {"q": "grey heron river", "mode": "dense", "k": 3, "mmr": {"lambda": 0.3}})
    assert plain[:4] == sorted(plain[:4]) and kept == plain
    assert diverse[0] == plain[0] and set(diverse[1:]) == {"cat", "boat"}  # the duplicates wait behind the others
    page = ids(
        client, "default", {"q": "grey heron river", "mode": "dense", "k": 2, "offset": 1, "mmr": {"lambda": 0.3}}
    )
    assert page == diverse[1:3]


def test_search_by_vector_finds_what_the_text_finds_and_returns_vectors_when_asked(client):
    docs = [{"id": "heron", "text": "a grey heron waits"}, {"id": "cat", "text": "the cat sleeps in the park"}]
    assert client.post("/documents", json={"documents": docs}).status_code == 201
    by_text = client.post("/search", json={"q": "grey heron", "mode": "dense", "include_vectors": True}).json()
    vector = by_text["results"][0]["vector"]
    assert len(vector) == by_text["search_space"]["dim"] and abs(np.linalg.norm(vector) - 1) < 1e-5
    by_vector = client.post("/search", json={"vector": vector, "k": 2}).json()
    assert [h["id"] for h in by_vector["results"]] == ["heron", "cat"] and by_vector["query"] is None
    assert by_vector["ranking"]["mode"] == "dense" and abs(by_vector["results"][0]["score"] - 1) < 1e-5
    unmapped = {"texts": ["grey heron"], "corrected": False, "normalize": False}
    raw = client.post("/embed", json=unmapped).json()["embeddings"][0]
    by_raw = client.post("/search", json={"vector": raw, "vector_space": "raw", "k": 2}).json()["results"]
    assert [h["id"] for h in by_raw] == [h["id"] for h in by_text["results"]]
    embedded = client.post("/embed", json={"texts": ["a grey heron waits"], "space": "search"}).json()["embeddings"]
    assert np.dot(embedded[0], vector) > 0.9999  # /embed's search space is the index's (stored in float16)
    both = client.post("/search", json={"q": "cat park", "vector": vector, "mode": "hybrid"}).json()
    assert both["ranking"]["mode"] == "hybrid" and {h["id"] for h in both["results"]} == {"heron", "cat"}


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"vector": [0.1, 0.2]}, "numbers in the search space"),
        ({"vector": [0.0] * 8}, "not all zero"),
        ({"vector": [0.1] * 8, "mode": "lexical"}, "send q too"),
        ({"k": 3}, "send q (a text), vector, both, or like"),
        ({"like": "heron", "vector": [0.1] * 8}, "like and vector both name the dense query"),
        ({"q": "x", "filter": {"price": {"$gt": [1]}}}, "$gt at price"),
        ({"q": "x", "filter": {"$nor": [{"a": 1}]}}, "unknown operator $nor"),
        ({"q": "x", "mmr": {"lambda": 2}}, "mmr.lambda"),
    ],
)
def test_a_bad_vector_filter_or_mmr_is_a_422_in_one_line(client, body, says):
    message = error_of(client.post("/search", json=body), 422)["message"]
    assert says in message and "\n" not in message


def test_a_boolean_filter_and_a_number_filter_are_two_filters(client):
    """False == 0 in Python: their filters once shared one cached list of labels, the first one asked winning."""
    docs = [{"id": f"f{i}", "text": f"note {i}", "metadata": {"b": False}} for i in range(3)]
    docs += [{"id": f"z{i}", "text": f"note {i}", "metadata": {"b": 0}} for i in range(3)]
    docs += [{"id": f"o{i}", "text": f"other note {i}"} for i in range(114)]  # 3 of 120: a selector's share
    for start in range(0, len(docs), 8):
        assert client.post("/documents", json={"documents": docs[start : start + 8]}).status_code == 201
    for where, prefix in (({"b": 0}, "z"), ({"b": False}, "f"), ({"b": 0}, "z")):
        found = ids(client, "default", {"q": "note", "mode": "dense", "k": 6, "filter": where})
        assert sorted(found) == [f"{prefix}{i}" for i in range(3)], where


LIKE_DOCS = [
    {"id": "heron", "text": "a grey heron waits by the river at dawn", "metadata": {"kind": "bird"}},
    {"id": "egret", "text": "a white egret waits by the river at dusk", "metadata": {"kind": "bird"}},
    {"id": "stork", "text": "a stork wades in the river", "metadata": {"kind": "bird"}},
    {"id": "cat", "text": "the cat sleeps in the park", "metadata": {"kind": "pet"}},
    {"id": "dog", "text": "a dog runs in the park at night", "metadata": {"kind": "pet"}},
    {"id": "train", "text": "the night train leaves the station", "metadata": {"kind": "thing"}},
]


def test_like_finds_the_documents_nearest_a_stored_one_without_it_in_every_mode_and_both_forms(client):
    assert client.post("/documents", json={"documents": LIKE_DOCS}).status_code == 201
    posted = client.post("/search", json={"like": "heron", "k": 5}).json()
    ids = [h["id"] for h in posted["results"]]
    assert "heron" not in ids and len(ids) == 5 and ids[0] == "egret"  # the near copy first, the document left out
    assert posted["like"] == "heron" and posted["query"] is None and posted["ranking"]["mode"] == "hybrid"
    got = client.get("/search", params={"like": "heron", "q": "waits by the river", "k": 5}).json()
    assert "heron" not in [h["id"] for h in got["results"]] and got["results"][0]["id"] == "egret"
    assert posted["ranking"]["feedback"] == {"docs": 3, "weight": 1.0, "from": ids[:3]}  # like's own default
    plain = {"like": "heron", "k": 1, "explain": True, "feedback": False}
    told = client.post("/search", json=plain).json()["results"][0]["explain"]
    assert told["dense"]["rank"] == told["lexical"]["rank"] == 1  # left out of both lists before they were weighed
    weighed = client.post("/search", json=plain).json()["ranking"]["confidence"]
    assert weighed["lexical"] < 1  # no other document holds all its words: its own coverage does not count
    fed = client.post("/search", json={"like": "heron", "explain": True}).json()["results"]
    assert "heron" not in [h["id"] for h in fed] and all(h["explain"]["dense"]["rank"] for h in fed[:3])
    for mode in ("dense", "lexical"):
        asked = {"like": "heron", "mode": mode, "feedback": False}  # the nearest as found, not fed back
        found = [h["id"] for h in client.post("/search", json=asked).json()["results"]]
        assert found[0] == "egret" and "heron" not in found, (mode, found)
    pets = client.post("/search", json={"like": "dog", "filter": {"kind": "pet"}}).json()["results"]
    assert [h["id"] for h in pets] == ["cat"]
    pages = [client.post("/search", json={"like": "heron", "k": 2, "offset": o}).json()["results"] for o in (0, 2)]
    assert [h["id"] for page in pages for h in page] == ids[:4]  # the left-out document does not shift the pages


def test_a_stored_copy_of_a_long_query_comes_first_and_the_others_rank_as_if_it_were_not_stored(client):
    pasted = "a grey heron waits by the river and a white egret waits by the river at dusk near the night train"
    copy = {"id": "copy", "text": pasted, "metadata": {"kind": "copy"}}
    assert client.post("/documents", json={"documents": [*LIKE_DOCS, copy]}).status_code == 201
    found = client.post("/search", json={"q": pasted, "k": 6}).json()
    ranked = {"q": pasted, "k": 5, "filter": {"kind": {"$ne": "copy"}}, "explain": True}
    without = client.post("/search", json=ranked).json()  # the same statistics, the copy filtered out of both lists
    assert found["results"][0]["id"] == "copy"
    rest = [(h["id"], h["rank_score"]) for h in found["results"][1:]]
    assert rest == [(h["id"], pytest.approx(h["rank_score"])) for h in without["results"]]
    assert without["ranking"]["confidence"]["lexical"] < 1  # what the copy's own coverage would have read as 1


def test_like_of_a_document_that_is_not_stored_is_a_404_and_with_q_its_vector_meets_q_s_words(client):
    assert client.post("/documents", json={"documents": LIKE_DOCS}).status_code == 201
    assert "no document with id 'ghost'" in error_of(client.post("/search", json={"like": "ghost"}), 404)["message"]
    error_of(client.get("/search", params={"like": ""}), 422)
    error_of(client.get("/search", params={"like": "heron"}), 422)  # the GET form needs q: like alone is POST's
    lexical = client.get("/search", params={"like": "heron", "q": "night train", "mode": "lexical"}).json()
    assert [h["id"] for h in lexical["results"]][:1] == ["train"] and lexical["like"] == "heron"  # q's words
    unfed = {"like": "heron", "q": "night train", "mode": "dense", "feedback": "false"}
    dense = client.get("/search", params=unfed).json()
    assert [h["id"] for h in dense["results"]][0] == "egret"  # the document's vector, itself left out


def walk(client, method: str, query: dict, k: int) -> list[str]:
    """Every page of a query through its next_cursor, until the answer has none."""
    ids, cursor = [], None
    while True:
        asked = {**query, "k": k, **({"cursor": cursor} if cursor else {})}
        answer = client.get("/search", params=asked) if method == "GET" else client.post("/search", json=asked)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["collection_changed"] is False
        ids += [h["id"] for h in body["results"]]
        if (cursor := body["next_cursor"]) is None:
            return ids


def test_a_cursor_walks_every_document_once_whatever_the_page_size_and_names_a_changed_collection(client):
    docs = [{"id": f"c{i:03d}", "text": t} for i, t in enumerate(CORPUS)]
    for start in range(0, len(docs), 8):  # the client's server takes 8 a request
        assert client.post("/documents", json={"documents": docs[start : start + 8]}).status_code == 201
    query = {"q": "the cat sleeps in the park", "candidates": 30}
    by_20 = walk(client, "POST", query, 20)
    assert sorted(by_20) == sorted(d["id"] for d in docs)  # every document once: the window, then the dense order
    assert walk(client, "GET", query, 7) == by_20
    assert walk(client, "POST", {**query, "mode": "lexical"}, 3) == walk(client, "GET", {**query, "mode": "lexical"}, 9)
    first = client.post("/search", json={**query, "k": 5}).json()
    other = client.post("/search", json={"q": "a dog", "k": 5, "cursor": first["next_cursor"]})
    assert "another query" in error_of(other, 422)["message"]
    assert "next_cursor" in error_of(client.post("/search", json={**query, "cursor": "%%%"}), 422)["message"]
    both = client.post("/search", json={**query, "offset": 5, "cursor": first["next_cursor"]})
    assert error_of(both, 422)
    assert client.post("/documents", json={"documents": [{"id": "new", "text": "a new cat"}]}).status_code == 201
    after = client.post("/search", json={**query, "k": 5, "cursor": first["next_cursor"]}).json()
    assert after["collection_changed"] is True and len(after["results"]) == 5
    deep = client.post("/search", json={**query, "k": 20, "offset": 10**6})
    assert "10 times CE_MAX_K" in error_of(deep, 422)["message"]


def test_an_unknown_get_parameter_is_a_422_not_ignored(client):
    """prompt_name, a misspelt k: each changed nothing before, silently (searches take the model's query prompt)."""
    for params in ({"q": "park", "prompt_name": "query"}, {"q": "park", "top_k": 3}):
        message = error_of(client.get("/search", params=params), 422)["message"]
        assert (
            f"unknown search parameter {next(iter(params.keys() - {'q'}))!r}" in message
            and "include_vectors" in message
        )
