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
