"""A Glow-style normalizing flow applied in numpy: the weights come from `app.correction.flow_training`.

A fixed first stage whitens (the corpus's mean and U S^-1/2); then each block is actnorm, an invertible
linear map and an affine coupling whose log-scale is bounded by tanh. Inputs are made finite and
clipped first, so any input, however extreme, maps to a finite output, and the map is exactly
invertible on the clipped range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SCALE_BOUND = 2.0  # |log-scale| of a coupling stays below this (exp(2) ~ 7.4 per block)
PREFIX = "flow"


def _mlp(x: np.ndarray, *net: np.ndarray) -> np.ndarray:
    """The coupling's MLP, (w1, b1, w2, b2, w3, b3): two ReLU layers, then a linear one."""
    w1, b1, w2, b2, w3, b3 = net
    h = np.maximum(x @ w1 + b1, 0.0)
    h = np.maximum(h @ w2 + b2, 0.0)
    out: np.ndarray = h @ w3 + b3
    return out


@dataclass(frozen=True)
class FlowBlock:
    loc: np.ndarray  # actnorm: y = (x + loc) * exp(log_scale)
    log_scale: np.ndarray
    weight: np.ndarray  # invertible linear: y = x @ weight.T
    net: tuple[np.ndarray, ...]  # coupling MLP (w1, b1, w2, b2, w3, b3): first half -> (log-scale, shift)

    def _coupling(self, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = _mlp(first, *self.net)
        half = out.shape[1] // 2
        return SCALE_BOUND * np.tanh(out[:, :half]), out[:, half:]

    def forward(self, x: np.ndarray) -> np.ndarray:
        y = ((x + self.loc) * np.exp(self.log_scale)) @ self.weight.T
        half = y.shape[1] // 2
        first, second = y[:, :half], y[:, half:]
        s, t = self._coupling(first)
        return np.concatenate([first, second * np.exp(s) + t], axis=1)

    def inverse(self, z: np.ndarray) -> np.ndarray:
        half = z.shape[1] // 2
        first, second = z[:, :half], z[:, half:]
        s, t = self._coupling(first)
        y = np.concatenate([first, (second - t) * np.exp(-s)], axis=1)
        x: np.ndarray = np.linalg.solve(self.weight, y.T).T * np.exp(-self.log_scale) - self.loc
        return x


@dataclass(frozen=True)
class Flow:
    """x -> z, trained so that z is close to a standard Gaussian on the fitting corpus."""

    mean: np.ndarray  # the fixed first stage, the corpus's whitening: (x - mean) @ basis
    basis: np.ndarray
    blocks: tuple[FlowBlock, ...]
    clip: float  # inputs are clipped to [-clip, clip] (a few times the corpus's largest value)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = np.clip(
            np.nan_to_num(np.asarray(x, dtype=np.float64), posinf=self.clip, neginf=-self.clip), -self.clip, self.clip
        )
        z = (x - self.mean) @ self.basis
        for block in self.blocks:
            z = block.forward(z)
        out: np.ndarray = z.astype(np.float32)
        return out

    def inverse(self, z: np.ndarray) -> np.ndarray:
        x = np.asarray(z, dtype=np.float64)
        for block in reversed(self.blocks):
            x = block.inverse(x)
        out: np.ndarray = (np.linalg.solve(self.basis.T, x.T).T + self.mean).astype(np.float32)
        return out

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Named arrays for the artifact file."""
        arrays = {f"{PREFIX}.clip": np.array([self.clip]), f"{PREFIX}.mean": self.mean, f"{PREFIX}.basis": self.basis}
        for i, b in enumerate(self.blocks):
            arrays.update(
                {f"{PREFIX}.{i}.loc": b.loc, f"{PREFIX}.{i}.log_scale": b.log_scale, f"{PREFIX}.{i}.weight": b.weight}
            )
            arrays.update({f"{PREFIX}.{i}.net{j}": a for j, a in enumerate(b.net)})
        return arrays

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Flow | None:
        """The flow stored in an artifact's arrays, or None when it has none."""
        if f"{PREFIX}.clip" not in arrays:
            return None

        def read(name: str) -> np.ndarray:
            return np.asarray(arrays[f"{PREFIX}.{name}"], dtype=np.float64)

        blocks: list[FlowBlock] = []
        while f"{PREFIX}.{len(blocks)}.loc" in arrays:
            i = len(blocks)
            net = tuple(read(f"{i}.net{j}") for j in range(6))
            blocks.append(FlowBlock(read(f"{i}.loc"), read(f"{i}.log_scale"), read(f"{i}.weight"), net))
        return cls(read("mean"), read("basis"), tuple(blocks), float(arrays[f"{PREFIX}.clip"][0]))
