"""A collection's settings as Redis keeps them: the name rule, a round trip through bytes, its keys and search."""

from __future__ import annotations

import pytest

from app.services.collections.spec import NAME, CollectionSpec


@pytest.mark.parametrize("name", ["a", "tickets", "faq-2024", "x_y", "0" * 64])
def test_names_that_are_allowed(name):
    assert NAME.fullmatch(name)


@pytest.mark.parametrize("name", ["", "Tickets", "-a", "_a", "a b", "a/b", "a" * 65, "é"])
def test_names_that_are_not(name):
    assert not NAME.fullmatch(name)


def test_a_spec_round_trips_and_names_its_keys_and_search_settings():
    spec = CollectionSpec("t", "onnx", "mean", None, "auto", uid="abc", fusion="rrf", lexical_weight=0.3)
    assert CollectionSpec.from_bytes(spec.to_bytes()) == spec
    assert spec.collection_key == "collection:t:abc" and spec.backbone_key == ("onnx", "mean", None)
    assert spec.search == {"fusion": "rrf", "lexical_weight": 0.3}  # only what it set: the service's own hold else
    assert not spec.loading and not spec.failed
    assert CollectionSpec("t", "onnx", "mean", None, "auto", state="loading").loading
