"""/metrics as Prometheus scrapes it, and a request id on every answer."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


def scrape(client) -> dict:
    text = client.get("/metrics").text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
    }


def test_metrics_count_requests_by_route_and_status_and_see_the_encoder(client):
    for _ in range(3):
        assert client.post("/embed", json={"texts": ["a cat", "a dog"]}).status_code == 200
    assert client.post("/embed", json={"texts": []}).status_code == 422
    assert client.get("/documents/nope").status_code == 404
    samples = scrape(client)
    count = lambda route, method, status: samples[  # noqa: E731
        ("ce_http_requests_total", (("method", method), ("route", route), ("status", status)))
    ]
    assert count("/embed", "POST", "200") == 3 and count("/embed", "POST", "422") == 1
    assert count("/documents/{doc_id:path}", "GET", "404") == 1  # the template, not the id
    assert samples[("ce_http_request_duration_seconds_count", (("method", "POST"), ("route", "/embed")))] == 4
    assert samples[("ce_encoder_round_texts_count", ())] >= 3 and samples[("ce_encoder_round_texts_sum", ())] >= 6
    assert samples[("ce_encoder_round_seconds_count", ())] >= 3
    assert samples[("ce_encoder_queue_texts", ())] == 0
    info = next(k for k in samples if k[0] == "ce_service_info")
    labels = dict(info[1])
    assert labels["backbone"] == "hashing" and labels["correction"].startswith("whitening-")
    assert labels["correction"] == client.get("/info").json()["correction"]["id"]


def test_every_response_carries_a_request_id(client):
    ids = {client.post("/embed", json={"texts": ["a cat"]}).headers["x-request-id"] for _ in range(3)}
    assert len(ids) == 3 and all(len(i) == 32 for i in ids)
    assert client.get("/nope").headers["x-request-id"]
    assert client.post("/embed", json={}).headers["x-request-id"]  # errors too
    mine = client.get("/health", headers={"X-Request-ID": "trace-42.a_b"})
    assert mine.headers["x-request-id"] == "trace-42.a_b"  # a caller's safe id is kept
    injected = client.get("/health", headers={"X-Request-ID": "bad id\\r\\nSet-Cookie: x"})
    assert (
        injected.headers["x-request-id"] != "bad id\\r\\nSet-Cookie: x" and len(injected.headers["x-request-id"]) == 32
    )
