"""The modules a sentence-transformers folder runs after its pooling (Dense, Normalize), in numpy: the same on
every runtime, and served without torch."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.special import erf, expit

from app.backbones.architecture import FolderRefused

# torch.nn activations by the name sentence-transformers saves (its `fullname`), as numpy functions.
ACTIVATIONS = {
    "torch.nn.modules.linear.Identity": lambda x: x,
    "torch.nn.modules.activation.Tanh": np.tanh,
    "torch.nn.modules.activation.ReLU": lambda x: np.maximum(x, 0),
    "torch.nn.modules.activation.Sigmoid": expit,
    "torch.nn.modules.activation.GELU": lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2))),
}
DEFAULT_ACTIVATION = "torch.nn.modules.activation.Tanh"  # sentence-transformers' Dense default


@dataclass(frozen=True, eq=False)
class Dense:
    """`activation(x @ W.T + b)`, sentence-transformers' Dense."""

    weight: np.ndarray = field(repr=False)  # (out, in)
    bias: np.ndarray | None = field(repr=False)
    activation: str = DEFAULT_ACTIVATION

    def __call__(self, x: np.ndarray) -> np.ndarray:
        y = x.astype(np.float32) @ self.weight.T
        return np.asarray(ACTIVATIONS[self.activation](y if self.bias is None else y + self.bias))

    def digest(self) -> str:
        parts = [self.weight.tobytes(), b"" if self.bias is None else self.bias.tobytes(), self.activation.encode()]
        return hashlib.sha256(b"|".join(parts)).hexdigest()


@dataclass(frozen=True)
class Normalize:
    """Unit length, sentence-transformers' Normalize (a zero vector stays zero)."""

    def __call__(self, x: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        return np.asarray(x / np.maximum(norms, 1e-12))

    def digest(self) -> str:
        return "normalize"


Head = Dense | Normalize


def _tensors(path: Path) -> dict[str, np.ndarray]:
    """A module's weights: model.safetensors (read without torch), else an older pytorch_model.bin (needs torch)."""
    safe, pickled = path / "model.safetensors", path / "pytorch_model.bin"
    try:
        if safe.is_file():
            from safetensors.numpy import load_file

            return load_file(str(safe))
        if pickled.is_file():
            import torch

            return {k: v.numpy() for k, v in torch.load(pickled, map_location="cpu", weights_only=True).items()}
    except ModuleNotFoundError as exc:
        raise FolderRefused(f"{pickled} needs torch to read; save it as model.safetensors") from exc
    except Exception as exc:  # noqa: BLE001  # a library's own error for a corrupt file, whatever its type
        raise FolderRefused(f"the weights in {path} cannot be read: {exc}") from None
    raise FolderRefused(f"{path} holds no weights (model.safetensors or pytorch_model.bin)")


def read_dense(path: Path) -> Dense:
    """A Dense module's folder: its config and its weights, checked against each other."""
    try:
        config = json.loads((path / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise FolderRefused(f"{path}/config.json cannot be read: {exc}") from None
    activation = config.get("activation_function") or DEFAULT_ACTIVATION
    if activation not in ACTIVATIONS:
        raise FolderRefused(f"{path}: activation {activation!r} is not served (one of {', '.join(ACTIVATIONS)})")
    if config.get("use_residual"):
        raise FolderRefused(f"{path}: a Dense module with a residual connection is not served")
    tensors = _tensors(path)
    weight, bias = tensors.get("linear.weight"), tensors.get("linear.bias")
    shape = (config.get("out_features"), config.get("in_features"))
    if weight is None or weight.shape != shape or (bias is not None and bias.shape != shape[:1]):
        raise FolderRefused(f"{path}: its weights do not match its config's {shape[1]} -> {shape[0]} features")
    return Dense(weight.astype(np.float32), None if bias is None else bias.astype(np.float32), activation)
