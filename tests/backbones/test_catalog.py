"""Backbones by name: built from the settings, an unknown name refused with the choices."""

from __future__ import annotations

import pytest

from app.backbones.base import Backbone
from app.backbones.catalog import available, build_backbone, missing_runtime
from app.core.config import Settings


def test_a_backbone_is_built_by_its_name_and_an_unknown_one_is_named():
    assert {"hashing", "huggingface", "onnx"} <= set(available())
    assert build_backbone(Settings(backbone="hashing", pooling="cls")).pooling == "cls"
    with pytest.raises(ValueError, match=r"unknown backbone 'nope'; choose one of \["):
        build_backbone(Settings.model_construct(backbone="nope"))
    assert missing_runtime("hashing") is None and missing_runtime("huggingface") is None  # torch is installed here


def test_registry_lists_and_builds():
    assert {"huggingface", "hashing"} <= set(available())
    backbone = build_backbone(Settings(backbone="hashing"))
    assert isinstance(backbone, Backbone) and backbone.dim == 64
    with pytest.raises(ValueError, match="unknown backbone 'nope'"):
        build_backbone(Settings(backbone="nope"))
