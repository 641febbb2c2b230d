"""Backbones by name: the `CE_BACKBONE` setting picks one of the registered factories."""

from __future__ import annotations

import importlib
import importlib.util
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
READS_FOLDER = ("huggingface", "onnx")  # the backbones that serve a model folder (CE_MODEL_PATH)
_RUNTIMES = {"huggingface": "torch"}  # the library a backbone loads that only the offline extra installs


def register(key: str) -> Callable[[BackboneFactory], BackboneFactory]:
    """Decorator that makes a backbone selectable by the `CE_BACKBONE` setting."""

    def deco(factory: BackboneFactory) -> BackboneFactory:
        _REGISTRY[key] = factory
        return factory

    return deco


def available() -> list[str]:
    """Registry keys a user can choose from."""
    return sorted(set(_REGISTRY) | set(_BUILTIN))


def lacks(key: str, module: str | None) -> str:
    """What to say when a backbone's runtime is not installed."""
    return (
        f"backbone {key!r} needs {module}, which this install lacks: pip install 'corrected-embeddings[offline]' "
        "(the image: its `torch` target)"
    )


def missing_runtime(key: str) -> str | None:
    """Why the backbone `key` cannot load in this install (its runtime is absent), or None."""
    module = _RUNTIMES.get(key)
    return lacks(key, module) if module and importlib.util.find_spec(module) is None else None


def build_backbone(settings: Settings) -> Backbone:
    """Construct the backbone named by the settings."""
    key = settings.backbone
    if key not in _REGISTRY and key in _BUILTIN:
        try:
            importlib.import_module(_BUILTIN[key])  # its @register line runs
        except ModuleNotFoundError as exc:  # torch, in an install without the offline extra (the image)
            raise ValueError(lacks(key, exc.name)) from exc
    try:
        factory = _REGISTRY[key]
    except KeyError:
        raise ValueError(f"unknown backbone {key!r}; choose one of {available()}") from None
    return factory(settings)
