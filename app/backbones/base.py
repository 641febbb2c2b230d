"""The backbone seam: anything that turns texts into float32 vectors, and a registry to pick one."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from app.core.settings import Settings


@runtime_checkable
class Backbone(Protocol):
    """Encodes whole batches; `fingerprint` ties every correction to the exact vectors it was fitted on."""

    name: str
    fingerprint: str
    dim: int
    pooling: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return float32 vectors of shape (len(texts), dim), unnormalized."""
        ...


def make_fingerprint(**parts: object) -> str:
    """A short stable hash of everything that determines a backbone's output vectors."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


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
