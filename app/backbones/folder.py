"""A sentence-transformers folder read as sentence-transformers reads it: modules.json in order (Transformer,
Pooling, Dense..., Normalize), the pooling's config, the length and lower-casing, the prompts. A plain Hugging Face
folder (no modules.json) reads as one with nothing of its own to say."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from app.backbones.architecture import UNBOUNDED, FolderRefused
from app.backbones.heads import Dense, Head, Normalize, read_dense
from app.backbones.prompts import NO_PROMPTS, Prompts
from app.core.names import Pooling

# sentence-transformers' pooling modes (its config's `pooling_mode`, or the older `pooling_mode_*_tokens` flags).
ST_POOLINGS = {
    "cls": Pooling.CLS,
    "mean": Pooling.MEAN,
    "max": Pooling.MAX,
    "mean_sqrt_len_tokens": Pooling.MEAN_SQRT_LEN,
    "weightedmean": Pooling.WEIGHTED_MEAN,
    "lasttoken": Pooling.LAST_TOKEN,
}
_FLAGS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
# The transformer's own config file, by the names sentence-transformers has given it over the years.
_TRANSFORMER_CONFIGS = (
    "sentence_bert_config.json",
    "sentence_roberta_config.json",
    "sentence_distilbert_config.json",
    "sentence_camembert_config.json",
    "sentence_albert_config.json",
    "sentence_xlm-roberta_config.json",
)


@dataclass(frozen=True)
class ModelFolder:
    """Everything a folder decides about its vectors; None where it says nothing (a plain Hugging Face folder)."""

    root: Path
    weights: Path  # the transformer's own folder: the root, or an older layout's 0_Transformer
    pooling: Pooling | None = None
    heads: tuple[Head, ...] = ()  # after the pooling, in order; a last Normalize is `normalized` instead
    normalized: bool = False  # its vectors end L2-normalized (which the service does to every vector it returns)
    max_length: int | None = None
    lower_case: bool = False
    prompts: Prompts = field(default_factory=lambda: NO_PROMPTS)
    similarity: str | None = None

    @property
    def sentence_transformers(self) -> bool:
        return (self.root / "modules.json").is_file()

    @property
    def dim(self) -> int | None:
        """The vectors' dimension when a Dense head sets it."""
        dense = [h for h in self.heads if isinstance(h, Dense)]
        return int(dense[-1].weight.shape[0]) if dense else None

    def identity(self) -> dict[str, object]:
        """What the folder adds to the weights' identity: the heads (by content), length, casing and prompts."""
        heads = hashlib.sha256()
        for head in self.heads:
            heads.update(head.digest().encode())
        return {
            "heads": heads.hexdigest()[:16] if self.heads else "",
            "lower_case": self.lower_case,
            "prompts": dict(sorted(self.prompts.named.items())),
        }


def _json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise FolderRefused(f"{path} cannot be read: {exc}") from None
    if not isinstance(value, dict | list):
        raise FolderRefused(f"{path} holds no JSON object")
    return value if isinstance(value, dict) else {"modules": value}


def _pooling(path: Path) -> Pooling:
    config = _json(path / "config.json")
    mode = config.get("pooling_mode") or [m for flag, m in _FLAGS.items() if config.get(flag)] or "mean"
    modes = [mode] if isinstance(mode, str) else list(mode)
    if len(modes) != 1 or modes[0] not in ST_POOLINGS:
        raise FolderRefused(f"{path}: pooling {mode!r} is not served (one of {', '.join(ST_POOLINGS)})")
    if config.get("include_prompt") is False:
        raise FolderRefused(
            f"{path}: a pooling that leaves the prompt's tokens out (include_prompt false) is not served"
        )
    return ST_POOLINGS[modes[0]]


def _length(root: Path, weights: Path, config: dict[str, Any]) -> int | None:
    """sentence-transformers' max_seq_length: its own config's, else the tokenizer's model_max_length."""
    tokenizer_args = config.get("tokenizer_args") or config.get("processor_kwargs") or {}
    length = tokenizer_args.get("model_max_length") or config.get("max_seq_length")
    if length is None:
        tokenizer = next(
            (p for p in (weights / "tokenizer_config.json", root / "tokenizer_config.json") if p.is_file()), None
        )
        length = _json(tokenizer).get("model_max_length") if tokenizer else None
    return int(length) if isinstance(length, int | float) and 0 < length < UNBOUNDED else None


def read_folder(root: Path) -> ModelFolder:
    """The folder's modules and settings; a module this service cannot run is refused, by name."""
    root = Path(root)
    if not root.is_dir():
        raise FolderRefused(f"model folder not found: {root}")
    if not (root / "modules.json").is_file():
        return ModelFolder(root, root)
    weights, pooling, heads = root, None, list[Head]()
    for module in _json(root / "modules.json")["modules"]:
        kind, path = str(module.get("type", "")).rsplit(".", 1)[-1], root / str(module.get("path", ""))
        if kind == "Transformer":
            weights = path
        elif kind == "Pooling":
            pooling = _pooling(path)
        elif kind == "Dense":
            heads.append(read_dense(path))
        elif kind == "Normalize":
            heads.append(Normalize())
        else:
            raise FolderRefused(
                f"{root}: module {module.get('type')!r} ({module.get('path')}) is not one this service runs"
            )
    if pooling is None:
        raise FolderRefused(f"{root}: modules.json has no Pooling module, so the model gives no sentence vector")
    config = next((_json(weights / n) for n in _TRANSFORMER_CONFIGS if (weights / n).is_file()), {})
    st_config = root / "config_sentence_transformers.json"
    st = _json(st_config) if st_config.is_file() else {}
    prompts = {str(k): str(v) for k, v in (st.get("prompts") or {}).items()}
    default = st.get("default_prompt_name")
    if default is not None and default not in prompts:
        raise FolderRefused(f"{st_config}: default_prompt_name {default!r} names none of its prompts")
    normalized = bool(heads) and isinstance(heads[-1], Normalize)
    return ModelFolder(
        root=root,
        weights=weights,
        pooling=pooling,
        heads=tuple(heads[:-1] if normalized else heads),
        normalized=normalized,
        max_length=_length(root, weights, config),
        lower_case=bool(config.get("do_lower_case", False)),
        prompts=Prompts(prompts, default),
        similarity=st.get("similarity_fn_name"),
    )


def apply_heads(folder: ModelFolder, pooled: np.ndarray) -> np.ndarray:
    """The pooled vectors through the folder's heads, in order: what its modules after the pooling make of them."""
    for head in folder.heads:
        pooled = head(pooled)
    return pooled.astype(np.float32, copy=False)
