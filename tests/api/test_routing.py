"""A large body's lists counted by a streaming parser before Python builds them: over the bound at any depth."""

from __future__ import annotations

import json

import pytest

from app.api.routing import holds_a_list_over


@pytest.mark.parametrize(
    ("body", "over"),
    [
        ({"texts": ["a"] * 5}, False),
        ({"texts": ["a"] * 6}, True),
        ({"documents": [{"text": "a", "metadata": {"tags": list(range(6))}}]}, True),  # nested in an object
        ({"pairs": [["a", "b"]] * 5, "x": [[1] * 5]}, False),  # many lists, none over
        ({"a": {"b": {"c": [0] * 6}}}, True),
    ],
)
def test_any_list_over_the_limit_is_found(body, over):
    assert holds_a_list_over(json.dumps(body).encode(), 5) is over


def test_a_malformed_body_is_left_to_the_json_parser():
    assert holds_a_list_over(b'{"texts": ["a", "b"', 1) is True  # two items seen before the body breaks off
    assert holds_a_list_over(b'{"texts": [', 1) is False


def test_a_large_body_that_is_not_utf8_is_a_4xx_not_a_500(client):
    """Found by the fuzzer: raw surrogate bytes (0xED 0xA0 0x80) in a body over 64 KB reached the streaming parser."""
    body = b'{"ids": ["' + b"0" * 70_000 + b'\xed\xa0\x80"]}'
    assert holds_a_list_over(body, 4096) is False  # not JSON it can read: FastAPI's own parse answers
    answer = client.post("/documents/get", content=body, headers={"content-type": "application/json"})
    assert 400 <= answer.status_code < 500, answer.text
