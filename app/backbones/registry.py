"""Backbones by name: the `CE_BACKBONE` setting picks one of the registered factories."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from app.backbones.base import Backbone

if TYPE_CHECKING:
    from app.core.config import Settings

BackboneFactory = Callable[["Settings"], Backbone]
_REGISTRY: dict[str, BackboneFactory] = {}


def register(key: str) -> Callable[[BackboneFactory], BackboneFactory]:
    """Decorator that makes a backbone selectable by the `CE_BACKBONE` setting."""

    def deco(factory: BackboneFactory) -> BackboneFactory:
        _REGISTRY[key] = factory
        return factory

    return deco


def available() -> list[str]:
    """Registry keys a user can choose from."""
    _load_builtin()
    return sorted(_REGISTRY)


def build_backbone(settings: Settings) -> Backbone:
    """Construct the backbone named by the settings."""
    _load_builtin()
    try:
        factory = _REGISTRY[settings.backbone]
    except KeyError:
        raise ValueError(f"unknown backbone {settings.backbone!r}; choose one of {available()}") from None
    return factory(settings)


def _load_builtin() -> None:
    """Import the built-in backbones so that their @register lines run."""
    from app.backbones import hashing, huggingface  # noqa: F401
