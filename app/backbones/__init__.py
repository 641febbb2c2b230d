"""Backbones: a Protocol, a catalog by name, the Hugging Face encoder and a hashing stand-in for fast tests."""

import os

# Before transformers is imported by any backbone: weights come from local folders only, never from a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from app.backbones.base import Backbone  # noqa: E402
from app.backbones.catalog import available, build_backbone, register  # noqa: E402

__all__ = ["Backbone", "available", "build_backbone", "register"]
