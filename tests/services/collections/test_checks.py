"""A new collection's name and encoder checked against what this service serves; omitted ones are its own."""

from __future__ import annotations

import importlib.util

import pytest

from app.core.config import Settings
from app.core.errors import Conflict, InvalidInput
from app.services.collections.checks import check_encoder, check_shards, failed_to_load
from app.services.collections.spec import CollectionSpec


def test_omitted_settings_are_the_services_and_what_it_does_not_serve_is_named():
    settings = Settings(backbone="hashing", pooling="mean")
    assert check_encoder(settings, "notes", None, None, None) == ("hashing", "mean", None)
    assert check_encoder(settings, "notes", "hashing", "cls", None) == ("hashing", "cls", None)
    with pytest.raises(InvalidInput, match=r"backbone 'onnx' is not served here: hashing \(CE_COLLECTION_BACKBONES\)"):
        check_encoder(settings, "notes", "onnx", None, None)
    with pytest.raises(InvalidInput, match="pooling must be one of"):
        check_encoder(settings, "notes", None, "maximum", None)
    with pytest.raises(InvalidInput, match="collection name 'Notes'"):
        check_encoder(settings, "Notes", None, None, None)
    allowed = Settings(backbone="hashing", collection_backbones=["onnx"])
    assert check_encoder(allowed, "notes", "onnx", "cls", None)[:2] == ("onnx", "cls")


def test_a_collection_that_failed_to_load_says_why_and_what_to_do():
    error = failed_to_load(CollectionSpec("t", "onnx", "mean", None, "auto", state="failed", error="no graph"))
    assert isinstance(error, Conflict) and error.message.startswith("collection 't' failed to load: no graph")


def test_shards_need_ray_serve_and_zero_needs_nothing(monkeypatch):
    assert check_shards(3, 16) == 3 and check_shards(0, 0) == 0  # this install has the `ray` extra
    with pytest.raises(InvalidInput, match="at most 2 .CE_MAX_COLLECTION_SHARDS., got 3"):
        check_shards(3, 2)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)  # as an install without it
    with pytest.raises(InvalidInput, match="ray"):
        check_shards(3, 16)
    assert check_shards(0, 16) == 0
