"""Any local Hugging Face encoder with the four poolings, loaded fully offline."""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from transformers import AutoModel
from transformers.utils import logging as hf_logging

from app.backbones.base import make_fingerprint
from app.backbones.catalog import register
from app.backbones.packed import PackedBert
from app.backbones.packed import supports as supports_packed
from app.backbones.pooling import pool, pooling_named
from app.backbones.tokens import (
    Tokenizer,
    TokenizerMethods,
    default_model_path,
    hash_weights,
    length_batches,
    local_model,
    padded,
)
from app.core.names import Pooling

if TYPE_CHECKING:
    from app.core.config import Settings

__all__ = ["HuggingFaceBackbone", "default_model_path", "length_batches"]

hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # transformers leaves it unannotated  # a weight-loading bar on every start-up is noise, not progress


@dataclass(eq=False)
class _Weights:
    """A loaded model (and its packed form): one per weights in a process, whatever the poolings using it."""

    model: Any  # a transformers model
    packed: PackedBert | None
    lock: threading.Lock = field(default_factory=threading.Lock)  # one forward pass at a time on these weights


_LOADED: weakref.WeakValueDictionary[tuple[str, bool], _Weights] = weakref.WeakValueDictionary()
_LOADING = threading.Lock()


def _loaded_weights(model_path: Path, weights: str, packed: bool) -> _Weights:
    """The model for these weights, loaded once while any backbone holds it: two poolings share one copy."""
    with _LOADING:
        found = _LOADED.get((weights, packed))
        if found is None:
            model = AutoModel.from_pretrained(model_path, local_files_only=True).eval()
            found = _Weights(model, PackedBert(model) if packed and supports_packed(model) else None)
            _LOADED[(weights, packed)] = found
        return found


class HuggingFaceBackbone(TokenizerMethods):
    """A transformers encoder plus a pooling; encodes length-sorted batches without gradients."""

    def __init__(
        self,
        model_path: Path,
        *,
        name: str | None = None,
        pooling: str = Pooling.MEAN,
        max_length: int = 256,
        batch_size: int = 64,
        max_batch_tokens: int = 8192,
        packed: bool = True,
    ):
        pooling = pooling_named(pooling)
        model_path = Path(model_path)
        if not model_path.is_dir():
            raise FileNotFoundError(f"model folder not found: {model_path}")
        weights = hash_weights(model_path)
        self._weights = _loaded_weights(model_path, weights, packed)  # shared by every pooling of these weights
        self.model = self._weights.model
        limit = getattr(self.model.config, "max_position_embeddings", max_length) or max_length
        self.max_length = min(max_length, limit)
        self.tokens = Tokenizer(model_path, self.max_length)
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.pooling = pooling
        self.name = name or model_path.name
        self.dim = int(self.model.config.hidden_size)
        self.vocab_size = int(self.model.config.vocab_size)
        self.runtime = "torch"
        self.fingerprint = make_fingerprint(
            model=self.name, weights=weights, pooling=pooling, max_length=self.max_length
        )
        self._needs_all_layers = pooling == Pooling.FIRST_LAST_AVG
        # The input embeddings come before every layer: embedding_avg needs no transformer layer at all.
        self._embeddings_only = pooling == Pooling.EMBEDDING_AVG and hasattr(self.model, "embeddings")
        self._packed = self._weights.packed
        self._lock = self._weights.lock

    @torch.inference_mode()
    def _encode_batch(
        self, features: dict[str, list[list[int]]], rows: list[int], token_weights: np.ndarray | None
    ) -> np.ndarray:
        selected = {key: [values[i] for i in rows] for key, values in features.items()}
        if self._embeddings_only:
            batch = _pad(selected, self._pad_id)
            hidden: Sequence[torch.Tensor] = (
                self.model.embeddings(input_ids=batch["input_ids"], token_type_ids=batch.get("token_type_ids")),
            )
            mask = batch["attention_mask"]
        elif self._packed is not None:
            hidden, mask = self._packed(selected["input_ids"], selected.get("token_type_ids"), self._needs_all_layers)
        else:
            batch = _pad(selected, self._pad_id)
            out = self.model(**batch, output_hidden_states=self._needs_all_layers)
            hidden = out.hidden_states if self._needs_all_layers else (out.last_hidden_state,)
            mask = batch["attention_mask"]
        weights = None
        if token_weights is not None:  # padding's weight is masked out, so any id will do there
            ids = padded(selected["input_ids"], self._pad_id)
            weights = torch.from_numpy(np.asarray(token_weights, dtype=np.float32)[ids])
        return pool(self.pooling, hidden, mask, weights).float().numpy()

    @property
    def _pad_id(self) -> int:
        return self.tokens.pad_id

    def encode(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        """Tokenize once, batch by length under a token budget (little padding), return in the caller's order.

        `token_weights` (one per vocabulary id, SIF's) reweight the tokens of the averaging poolings.
        """
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        features = self.tokens.features(texts)
        lengths = [len(ids) for ids in features["input_ids"]]
        with self._lock:
            for rows in length_batches(lengths, self.batch_size, self.max_batch_tokens):
                out[rows] = self._encode_batch(features, rows, token_weights)
        return out


def _pad(features: dict[str, list[list[int]]], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-pad every field to the longest row; input ids with the pad token, the rest with 0."""
    return {key: torch.from_numpy(padded(rows, pad_id if key == "input_ids" else 0)) for key, rows in features.items()}


def configure_torch_threads(n: int) -> None:
    """Use one intra-op thread per core unless told otherwise; inter-op parallelism only oversubscribes."""
    torch.set_num_threads(n or os.cpu_count() or 1)
    with contextlib.suppress(RuntimeError):  # already set once in this process
        torch.set_num_interop_threads(1)


@register("huggingface")
def _from_settings(settings: Settings) -> HuggingFaceBackbone:
    configure_torch_threads(int(os.environ.get("OMP_NUM_THREADS") or 0))
    path, options = local_model(settings)
    return HuggingFaceBackbone(path, **options)
