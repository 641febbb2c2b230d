"""What a key may do, decided without HTTP."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.core.access import EVERY, ApiKey


def test_a_bare_token_is_a_write_key_on_everything():
    key = ApiKey.model_validate("token")
    assert (key.scope, key.collections) == ("write", None)
    assert key.refusal("write", "any", "POST /documents") is None and key.refusal("write", None, "x") is None


def test_read_and_collection_limits_say_why():
    reader = ApiKey(key="t", scope="read", collections=["a", "b"])
    assert reader.refusal("read", "a", "GET /search") is None
    assert reader.refusal("write", "a", "POST /documents") == "this key is read-only: POST /documents needs a write key"
    assert reader.refusal("read", "c", "GET /search") == "this key is limited to collections a, b: not 'c'"
    assert reader.refusal("read", None, "GET /health") is None  # touches no collection
    assert reader.refusal("read", EVERY, "GET /metrics") == (
        "this key is limited to collections a, b: GET /metrics needs a key for all"
    )
    writer = ApiKey(key="t", collections=["a"])
    assert writer.refusal("write", EVERY, "POST /collections") == (
        "this key is limited to collections a: POST /collections needs a key for all"
    )
    assert ApiKey(key="t", scope="read").refusal("read", EVERY, "GET /metrics") is None


@pytest.mark.parametrize("bad", [" ", {"key": "t", "scope": "admin"}, {"key": "t", "collections": []}, {"k": "t"}])
def test_malformed_entries_are_refused(bad):
    with pytest.raises(ValidationError):
        ApiKey.model_validate(bad)
