"""The Python client against a real server: typed results, the server's errors as exceptions, and its retries."""

from __future__ import annotations

import httpx
import pytest

from corrected_embeddings_client import AsyncClient, Client, Document, InvalidRequest, Unauthorized, Unavailable
from corrected_embeddings_client.client import MAX_WAIT, wait_before
from tests.clients.conftest import API_KEY


def test_documents_round_trip_and_search_in_each_mode(client, collection):
    scoped = client.collection(collection)
    ids = scoped.add_documents(
        [
            Document("the red car is fast", "car", {"kind": "vehicle", "n": 1}),
            {"id": "cat", "text": "a cat sleeps on the mat", "metadata": {"kind": "animal"}},
            "a plane crosses the ocean",
        ]
    )
    assert ids[:2] == ["car", "cat"] and len(ids[2]) == 16  # the server names an unnamed document by its text
    assert scoped.get_document("car") == Document("the red car is fast", "car", {"kind": "vehicle", "n": 1})
    assert scoped.get_document("no-such-id") is None
    for mode in ("dense", "lexical", "hybrid"):
        result = scoped.search("a sleeping cat", 2, mode=mode)
        assert result.hits[0].id == "cat" and result.ranking["mode"] == mode
    only = scoped.search("fast car", 3, filter={"kind": "animal"})
    assert [h.id for h in only.hits] == ["cat"]
    like = scoped.search(None, 3, like="cat", mode="dense")  # more like a stored document: it is left out
    assert sorted(h.id for h in like.hits) == sorted(["car", ids[2]]) and like.query is None
    assert scoped.delete_document("cat") is True and scoped.delete_document("cat") is False
    assert [h.id for h in scoped.search("cat", 3, mode="dense").hits] == ["car", ids[2]]


def test_embeddings_are_the_collections_and_batched(client, collection):
    texts = [f"sentence number {i}" for i in range(300)]  # three requests of at most 128 texts
    vectors = client.collection(collection).embed(texts)
    assert len(vectors) == 300 and {len(v) for v in vectors} == {client.info()["dim"]}
    alone = client.embed([texts[299]])[0]  # the default collection's backbone and correction: the same space
    assert sum(a * b for a, b in zip(vectors[299], alone, strict=True)) > 0.99  # int8 scales by the batch: not ==
    (score,) = client.similarity([("a dog runs", "a dog is running")])
    assert 0.5 < score <= 1.0


def test_errors_carry_the_servers_message_and_request_id(client, server_url):
    with pytest.raises(InvalidRequest, match="k") as bad:
        client.search("cat", k=0)
    assert bad.value.status == 422 and bad.value.type == "validation_error" and bad.value.request_id
    with Client(server_url, "not-the-key") as wrong, pytest.raises(Unauthorized, match="API key"):
        wrong.info()


async def test_the_async_client_does_the_same(server_url, collection, client):
    async with AsyncClient(server_url, API_KEY, collection=collection) as aio:
        assert await aio.add_documents(["a green tree in the park"]) == [
            (await aio.search("tree", 1, mode="lexical")).hits[0].id
        ]
        assert len((await aio.embed(["x", "y"]))[1]) == client.info()["dim"]
        near = await aio.search(None, 5, like=(await aio.add_documents(["a tall tree by the park gate"]))[0])
        assert near.hits[0].text == "a green tree in the park" and len(near.hits) == 1
        assert (await aio.info())["state"] == "ready"


def busy_then(answers: list[httpx.Response]) -> httpx.MockTransport:
    """A transport answering from a script: the retry policy, tested without making a server busy."""
    return httpx.MockTransport(lambda request: answers.pop(0))


def test_429_and_503_are_retried_after_what_retry_after_says(monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr("corrected_embeddings_client.client.time.sleep", waits.append)
    answers = [
        httpx.Response(429, headers={"Retry-After": "2"}),
        httpx.Response(503, headers={"Retry-After": "0.5"}),
        httpx.Response(200, json={"embeddings": [[1.0]]}),
    ]
    http = httpx.Client(base_url="http://service", transport=busy_then(answers))
    assert Client("http://service", http=http).embed(["x"]) == [[1.0]]
    assert waits == [2.0, 0.5]


def test_retries_end_with_the_servers_error():
    body = {"error": {"type": "loading", "message": "collection c is loading"}}
    answers = [httpx.Response(503, headers={"Retry-After": "0"}, json=body) for _ in range(3)]
    http = httpx.Client(base_url="http://service", transport=busy_then(answers))
    with pytest.raises(Unavailable, match="collection c is loading"):
        Client("http://service", http=http, max_retries=2).info()
    assert answers == []  # three tries: the first and two retries


def test_backoff_without_retry_after_grows_and_is_bounded():
    assert 0.25 <= wait_before(0, None) <= 0.5 and 2.0 <= wait_before(3, None) <= 4.0
    assert wait_before(20, None) == MAX_WAIT
    assert wait_before(0, httpx.Response(429, headers={"Retry-After": "3600"})) == MAX_WAIT


def test_tokenize_shows_what_the_backbone_encodes(client, collection):
    short, long = client.collection(collection).tokenize(["Hello, world!", "word " * 300])
    assert short.tokens == ["[CLS]", "hello", ",", "world", "!", "[SEP]"] and short.count == 6
    assert not short.truncated
    assert long.count == 302 and long.truncated and len(long.tokens) == 256 and long.tokens[-1] == "[SEP]"
