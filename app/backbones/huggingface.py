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

from app.backbones.architecture import FolderRefused
from app.backbones.catalog import register
from app.backbones.folder import ModelFolder, read_folder
from app.backbones.local import LocalBackbone
from app.backbones.packed import PackedBert
from app.backbones.packed import supports as supports_packed
from app.backbones.pooling import accepts_token_types, hidden_states, pool
from app.backbones.tokens import default_model_path, length_batches, local_model, padded
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
            try:
                model = AutoModel.from_pretrained(model_path, local_files_only=True).eval()
            except (OSError, ValueError, RuntimeError) as exc:  # a corrupt or partial weights file
                raise FolderRefused(f"the weights in {model_path} cannot be loaded: {exc}") from exc
            found = _Weights(model, PackedBert(model) if packed and supports_packed(model) else None)
            _LOADED[(weights, packed)] = found
        return found


class HuggingFaceBackbone(LocalBackbone):
    """A transformers encoder plus a pooling and the folder's heads; encodes length-sorted batches without gradients."""

    def __init__(self, folder: ModelFolder | Path, *, packed: bool = True, **options: Any):
        folder = folder if isinstance(folder, ModelFolder) else read_folder(Path(folder))
        super().__init__(folder, **options)
        self._weights = _loaded_weights(folder.weights, self.weights, packed)  # shared by every pooling of them
        self.model = self._weights.model
        self.runtime = "torch"
        self.fingerprinted()
        self._needs_all_layers = self.pooling == Pooling.FIRST_LAST_AVG
        # The input embeddings come before every layer: embedding_avg needs no transformer layer at all (BERT's).
        self._embeddings_only = self.pooling == Pooling.EMBEDDING_AVG and self.architecture.model_type == "bert"
        self._token_types = accepts_token_types(self.model)
        self._packed = self._weights.packed
        self._lock = self._weights.lock
        self._check_dim()

    @torch.inference_mode()
    def _pool_rows(self, ids: list[list[int]], types: list[list[int]], token_weights: np.ndarray | None) -> np.ndarray:
        selected = {"input_ids": ids, "attention_mask": [[1] * len(row) for row in ids]}
        if self._token_types:
            selected["token_type_ids"] = types
        if self._embeddings_only:
            batch = _pad(selected, self._pad_id)
            hidden: Sequence[torch.Tensor] = (
                self.model.embeddings(input_ids=batch["input_ids"], token_type_ids=batch.get("token_type_ids")),
            )
            mask = batch["attention_mask"]
        elif self._packed is not None:
            hidden, mask = self._packed(ids, types, self._needs_all_layers)
        else:
            batch = _pad(selected, self._pad_id)
            hidden = hidden_states(
                self.model,
                self.pooling,
                batch["attention_mask"],
                batch.get("token_type_ids"),
                input_ids=batch["input_ids"],
            )
            mask = batch["attention_mask"]
        weights = None
        if token_weights is not None:  # padding's weight is masked out, so any id will do there
            weights = torch.from_numpy(np.asarray(token_weights, dtype=np.float32)[padded(ids, self._pad_id)])
        return pool(self.pooling, hidden, mask, weights).float().numpy()

    @property
    def _pad_id(self) -> int:
        return self.tokens.pad_id


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
    folder, options = local_model(settings)
    return HuggingFaceBackbone(folder, **options)
