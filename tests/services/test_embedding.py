"""What one request may cost: over the token budget is a 413 at once, naming the limit; /info states it."""

from __future__ import annotations

import time

from app.main import create_app
from tests.conftest import error_of, serve_app

LONG = " ".join(f"Sentence {i} is about rivers, gardens and the quiet city at night." for i in range(300))[:20_000]


def test_the_documented_maximum_body_is_refused_at_once_with_the_limit_named(make_settings):
    settings = make_settings(backbone="hashing")  # the documented limits: 256 texts of 20,000 characters
    with serve_app(create_app(settings)) as client:
        started = time.monotonic()
        r = client.post("/documents", json={"documents": [{"text": f"{i} {LONG}"} for i in range(256)]})
        seconds = time.monotonic() - started
        message = error_of(r, 413)["message"]
        assert "at most 262,144 per request (CE_MAX_REQUEST_TOKENS)" in message and message.startswith("documents:")
        assert seconds < 10
        assert client.get("/info").json()["index"]["size"] == 0  # nothing of it was stored
        assert client.get("/info").json()["limits"]["max_request_tokens"] == 262_144
        # /embed cuts each text at the token limit: the same texts cost 256 x 256 tokens there, within budget.
        assert client.post("/embed", json={"texts": [LONG] * 256}).status_code == 200


def test_embed_and_similarity_count_tokens_up_to_the_limit_of_each_text(make_settings):
    settings = make_settings(backbone="hashing", max_request_tokens=1000)
    with serve_app(create_app(settings)) as client:
        assert "(CE_MAX_REQUEST_TOKENS)" in error_of(client.post("/embed", json={"texts": [LONG] * 4}), 413)["message"]
        assert client.post("/embed", json={"texts": [LONG] * 3}).status_code == 200  # 3 x 256 tokens
        pairs = {"pairs": [[LONG, LONG]] * 2}
        assert "at most 1,000" in error_of(client.post("/similarity", json=pairs), 413)["message"]
