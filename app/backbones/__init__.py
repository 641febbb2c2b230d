"""Backbones: a Protocol, a registry, the Hugging Face encoder and a hashing stand-in for fast tests."""

from app.backbones.base import Backbone
from app.backbones.registry import available, build_backbone, register

__all__ = ["Backbone", "available", "build_backbone", "register"]
