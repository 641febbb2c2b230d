"""What a key may do, decided without HTTP."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.core.access import ApiKey


def test_a_bare_token_is_a_write_key_on_everything():
    key = ApiKey.model_validate("token")
    assert (key.scope, key.collections) == ("write", None)
    assert key.refusal("write", "any", "POST /documents") is None and key.refusal("write", None, "x") is None


def test_read_and_collection_limits_say_why():
    reader = ApiKey(key="t", scope="read", collections=["a", "b"])
    assert reader.refusal("read", "a", "GET /search") is None
    assert reader.refusal("write", "a", "POST /documents") == "this key is read-only: POST /documents needs a write key"
    assert reader.refusal("read", "c", "GET /search") == "this key is limited to collections a, b: not 'c'"
    assert reader.refusal("read", None, "GET /info") is None  # the service's own reads
    writer = ApiKey(key="t", collections=["a"])
    assert writer.refusal("write", None, "POST /collections") == (
        "this key is limited to collections a: POST /collections needs a key for all"
    )


@pytest.mark.parametrize("bad", [" ", {"key": "t", "scope": "admin"}, {"key": "t", "collections": []}, {"k": "t"}])
def test_malformed_entries_are_refused(bad):
    with pytest.raises(ValidationError):
        ApiKey.model_validate(bad)
