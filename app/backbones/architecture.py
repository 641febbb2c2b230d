"""What a model folder's config.json says about its encoder, read without transformers: the one registry of the
architectures served, their sizes, how many positions they really have, and which ONNX Runtime fuses."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Encoders transformers loads without remote code, each tested against sentence-transformers (tests/backbones).
ENCODERS = (
    "albert",
    "bert",
    "deberta-v2",
    "distilbert",
    "electra",
    "modernbert",
    "mpnet",
    "roberta",
    "xlm-roberta",
)
# Position ids that start after the padding id (fairseq's layout): pad_token_id + 1 positions are never reached.
PADDING_OFFSET = ("mpnet", "roberta", "xlm-roberta")
# ONNX Runtime's optimizer knows these as its "bert" model type; any other is served unfused.
FUSED_AS_BERT = ("bert", "distilbert", "electra", "roberta", "xlm-roberta")
UNBOUNDED = 1_000_000  # tokenizer_config's "no limit" is 1e30; anything this large says nothing


class FolderRefused(ValueError):
    """A model folder the service cannot serve as its authors meant: said in one line at start, never a 500 later."""


@dataclass(frozen=True)
class Architecture:
    """The encoder facts a backbone needs before (and without) loading its weights."""

    model_type: str
    hidden_size: int
    vocab_size: int
    positions: int  # tokens a text may have, special tokens included, before position ids run out
    heads: int

    @property
    def fuses(self) -> bool:
        """Whether ONNX Runtime's BERT fusions apply (checked against the unfused graph when made)."""
        return self.model_type in FUSED_AS_BERT


def _first(config: dict[str, Any], *keys: str) -> Any:
    return next((config[k] for k in keys if config.get(k) is not None), None)


def read_architecture(folder: Path) -> Architecture:
    """config.json read and checked: an encoder this service runs, with its sizes (DistilBERT's `dim` included)."""
    path = Path(folder) / "config.json"
    try:
        config = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise FolderRefused(f"{path} cannot be read as a model configuration: {exc}") from None
    model_type = str(config.get("model_type", "?"))
    if config.get("is_decoder") or config.get("is_encoder_decoder") or model_type not in ENCODERS:
        raise FolderRefused(
            f"{folder}: model type {model_type!r} is not an encoder this service runs (it runs {', '.join(ENCODERS)})"
        )
    hidden = _first(config, "hidden_size", "dim", "d_model")
    vocab = config.get("vocab_size")
    heads = _first(config, "num_attention_heads", "n_heads")
    if not (isinstance(hidden, int) and isinstance(vocab, int) and isinstance(heads, int)):
        raise FolderRefused(f"{path} lacks the hidden size, vocabulary size or head count of a {model_type} model")
    positions = _first(config, "max_position_embeddings", "n_positions") or UNBOUNDED
    if model_type in PADDING_OFFSET:
        positions -= int(config.get("pad_token_id") or 0) + 1
    return Architecture(model_type, hidden, vocab, int(positions), heads)


def served_length(folder_length: int | None, asked: int | None, default: int, positions: int, name: str) -> int:
    """The token limit in force: CE_MAX_LENGTH when set (refused past the positions), else the folder's own, else
    the default; a limit the positions cannot hold is refused rather than failing on the first long text."""
    if asked is not None and asked > positions:
        raise FolderRefused(f"CE_MAX_LENGTH={asked} exceeds {name}'s {positions} positions")
    length = asked or folder_length or default
    return min(length, positions) if asked is None else length
