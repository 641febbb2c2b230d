"""A weight-free backbone (hashed bag of words) so the HTTP layer can be tested in milliseconds."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from app.backbones.base import make_fingerprint
from app.backbones.catalog import register
from app.backbones.prompts import NO_PROMPTS
from app.core.names import Pooling

if TYPE_CHECKING:
    from app.core.config import Settings

_WORD = re.compile(r"\w+")
VOCAB_SIZE = 1 << 14  # words are hashed to ids in this range, so SIF can count and weigh them


class HashingBackbone:
    """Each word maps to a fixed random vector; a text is the mean of its words' vectors plus a bias."""

    def __init__(self, dim: int = 64, pooling: str = Pooling.MEAN, max_length: int = 256):
        self.name = self.runtime = "hashing"
        self.dim = dim
        self.vocab_size = VOCAB_SIZE
        self.pooling = pooling
        self.max_length = max_length  # words + 2, like a tokenizer's [CLS] ... [SEP]
        self.fingerprint = make_fingerprint(model="hashing", dim=dim, pooling=pooling, max_length=max_length)
        self.prompts = NO_PROMPTS
        # A shared offset makes the raw space anisotropic, like a real encoder's.
        self._bias = self._word_vector("<bias>") * 3.0

    def _word_vector(self, word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
        return np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        return [len(_WORD.findall(text)) + 2 for text in texts]

    def _words(self, text: str) -> list[str]:
        return _WORD.findall(text.lower())[: self.max_length - 2] or [text]

    @staticmethod
    def _word_id(word: str) -> int:
        return int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little") % VOCAB_SIZE

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        return [[self._word_id(w) for w in self._words(text)] for text in texts]

    def tokens_of(self, texts: Sequence[str]) -> list[list[str]]:
        return [self._words(text) for text in texts]

    def encode(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            words = self._words(text)
            w = np.ones(len(words)) if token_weights is None else token_weights[[self._word_id(x) for x in words]]
            out[i] = (w @ np.array([self._word_vector(x) for x in words])) / len(words) + self._bias
        return out


@register("hashing")
def _from_settings(settings: Settings) -> HashingBackbone:
    return HashingBackbone(pooling=settings.pooling, max_length=settings.max_length)
