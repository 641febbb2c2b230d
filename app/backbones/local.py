"""What a backbone of a local model folder is whatever runs it (torch, ONNX Runtime): the folder's choices with the
settings' explicit overrides, where each came from, the tokenizer, the heads after the pooling, the fingerprint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from app.backbones.architecture import Architecture, read_architecture, served_length
from app.backbones.base import make_fingerprint
from app.backbones.folder import ModelFolder, apply_heads
from app.backbones.pooling import pooling_named
from app.backbones.prompts import Prompts
from app.backbones.tokens import (
    Tokenizer,
    TokenizerMethods,
    hash_weights,
    length_batches,
    local_model,
    model_identity,
)
from app.core.names import Pooling

if TYPE_CHECKING:
    from app.backbones.base import Backbone
    from app.core.config import Settings

DEFAULT_LENGTH = 256  # CE_MAX_LENGTH's default: a folder that names no length of its own is cut here


class LocalBackbone(TokenizerMethods):
    """The Backbone protocol over a model folder; a runtime supplies `_pool_rows` (one padded batch, pooled)."""

    runtime: str
    _lock: Any  # one forward pass at a time on these weights (a threading.Lock)

    def __init__(
        self,
        folder: ModelFolder,
        *,
        name: str | None = None,
        pooling: str | None = None,
        max_length: int | None = None,
        batch_size: int = 64,
        max_batch_tokens: int = 8192,
    ):
        self.folder = folder
        self.name = name or folder.root.name
        self.pooling = pooling_named(pooling or folder.pooling or Pooling.MEAN)
        self.architecture, self.tokens, self.weights = prepared(folder, self.name, max_length)
        self.max_length = self.tokens.max_length
        self.batch_size, self.max_batch_tokens = batch_size, max_batch_tokens
        self.vocab_size = self.architecture.vocab_size
        self.dim = folder.dim or self.architecture.hidden_size
        self.sources = {
            "pooling": "CE_POOLING" if pooling else ("1_Pooling/config.json" if folder.pooling else "default"),
            "max_length": "CE_MAX_LENGTH" if max_length else ("the folder" if folder.max_length else "default"),
        }

    @property
    def prompts(self) -> Prompts:
        return self.folder.prompts

    def identity(self, **runtime: object) -> dict[str, object]:
        """Every part the vectors depend on, by content (a folder's name is none of them)."""
        return {
            **model_identity(self.folder, self.weights),
            "pooling": self.pooling,
            "max_length": self.max_length,
            **runtime,
        }

    def fingerprinted(self, **runtime: object) -> None:
        self.fingerprint_parts = self.identity(**runtime)
        self.fingerprint = make_fingerprint(**self.fingerprint_parts)
        # Before fingerprints went by content they named the folder; where the vectors are the same as then (a
        # folder with no heads, prompts or casing of its own), what was stored under that name is theirs too.
        same_vectors = self.fingerprint_parts.keys() == {"model", "weights", "pooling", "max_length", *runtime}
        legacy = {**self.fingerprint_parts, "model": self.name}
        self.legacy_fingerprint = make_fingerprint(**legacy) if same_vectors and legacy["model"] else None

    def describe(self) -> dict[str, Any]:
        """What /info says of the model: what is in force, and where each choice came from."""
        return {
            "model_type": self.architecture.model_type,
            "sentence_transformers": self.folder.sentence_transformers,
            "pooling": str(self.pooling),
            "max_length": self.max_length,
            "sources": dict(self.sources),
            "heads": [type(h).__name__ for h in self.folder.heads],
            "normalized": self.folder.normalized,
            "lower_case": self.folder.lower_case,
            "similarity": self.folder.similarity,
            **self.prompts.describe(),
        }

    def _pool_rows(self, ids: list[list[int]], types: list[list[int]], weights: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError

    def _check_dim(self) -> None:
        """The vectors' width, as a forward pass gives it (a head or an embedding size may set it)."""
        ids = self.tokens.ids(["dimension probe"])
        self.dim = apply_heads(self.folder, self._pool_rows(ids, [[0] * len(ids[0])], None)).shape[1]

    def encode(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        """Tokenize once, batch by length under a token budget, pool, run the heads; in the caller's order."""
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        features = self.tokens.features(texts)
        ids, types = features["input_ids"], features["token_type_ids"]
        with self._lock:
            for rows in length_batches([len(r) for r in ids], self.batch_size, self.max_batch_tokens):
                pooled = self._pool_rows([ids[i] for i in rows], [types[i] for i in rows], token_weights)
                out[rows] = apply_heads(self.folder, pooled)
        return out


def prepared(folder: ModelFolder, name: str, max_length: int | None) -> tuple[Architecture, Tokenizer, str]:
    """What a backbone of the folder needs before its weights load, each part refused in one line if it cannot
    serve: the encoder's config, the length in force (on the tokenizer), the tokenizer, whole weights by hash."""
    architecture = read_architecture(folder.weights)
    length = served_length(folder.max_length, max_length, DEFAULT_LENGTH, architecture.positions, name)
    tokens = Tokenizer(folder.weights, length, lower_case=folder.lower_case)
    return architecture, tokens, hash_weights(folder.weights)


def check_model(settings: Settings) -> None:
    """What loading the settings' model folder would refuse, found before a server starts, without loading it."""
    folder, options = local_model(settings)
    prepared(folder, options["name"], options["max_length"])


def model_description(backbone: Backbone) -> dict[str, Any]:
    """What /info and a collection's description say of the model in force (a folder's choices and their sources;
    a weight-free backbone has only its pooling and no prompts)."""
    if isinstance(backbone, LocalBackbone):
        return backbone.describe()
    return {"pooling": str(backbone.pooling), "max_length": backbone.max_length, **backbone.prompts.describe()}
