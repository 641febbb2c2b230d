"""The backbone seam: what turns texts into float32 vectors, and the fingerprint that names those vectors."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from app.backbones.prompts import Prompts


@runtime_checkable
class Backbone(Protocol):
    """Encodes whole batches; `fingerprint` ties every correction to the exact vectors it was fitted on."""

    name: str
    fingerprint: str
    dim: int
    max_length: int  # tokens per text, special tokens included; longer texts are cut there
    vocab_size: int  # token ids run below this: the length of SIF's weight table
    runtime: str  # what computes the vectors, as /info names it: torch, onnxruntime-int8, onnxruntime-fp32, hashing

    @property
    def pooling(self) -> str:  # read-only here, so a backbone may hold the Pooling enumeration (a str)
        ...

    @property
    def prompts(self) -> Prompts:  # the model's query and document prompts (none for most)
        ...

    def encode(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        """Float32 vectors of shape (len(texts), dim), unnormalized; `token_weights` (one per vocabulary id,
        SIF's) reweight the tokens of the averaging poolings."""
        ...

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text before truncation; callable from any thread (truncation checks, usage)."""
        ...

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The token ids the pooling sees (truncated as `encode` truncates): what SIF counts."""
        ...

    def tokens_of(self, texts: Sequence[str]) -> list[list[str]]:
        """The tokens `token_ids` are, as the tokenizer writes them (special tokens included): what /tokenize shows."""
        ...


def make_fingerprint(**parts: object) -> str:
    """A short stable hash of everything that determines a backbone's output vectors."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
