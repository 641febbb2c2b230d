"""Backbones by name: the `CE_BACKBONE` setting picks one of the registered factories."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.backbones.base import Backbone

if TYPE_CHECKING:
    from app.core.config import Settings

BackboneFactory = Callable[["Settings"], Backbone]
_REGISTRY: dict[str, BackboneFactory] = {}
# Imported only when chosen: a runtime (torch, ONNX Runtime) is loaded only by the backbone that uses it.
_BUILTIN = {
    "hashing": "app.backbones.hashing",
    "huggingface": "app.backbones.huggingface",
    "onnx": "app.backbones.onnx",
}


def register(key: str) -> Callable[[BackboneFactory], BackboneFactory]:
    """Decorator that makes a backbone selectable by the `CE_BACKBONE` setting."""

    def deco(factory: BackboneFactory) -> BackboneFactory:
        _REGISTRY[key] = factory
        return factory

    return deco


def available() -> list[str]:
    """Registry keys a user can choose from."""
    return sorted(set(_REGISTRY) | set(_BUILTIN))


def build_backbone(settings: Settings) -> Backbone:
    """Construct the backbone named by the settings."""
    key = settings.backbone
    if key not in _REGISTRY and key in _BUILTIN:
        importlib.import_module(_BUILTIN[key])  # its @register line runs
    try:
        factory = _REGISTRY[key]
    except KeyError:
        raise ValueError(f"unknown backbone {key!r}; choose one of {available()}") from None
    return factory(settings)
