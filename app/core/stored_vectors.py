"""How raw vectors are kept in Redis: float16, half of float32's bytes at a cosine error a test measures on real
sentences (under 5e-5); float32 where a value would not fit float16, and in records written before."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

STORED = "float16"
FLOAT16_LIMIT = 60_000.0  # float16's largest finite value is 65,504: beyond this a vector is kept as float32
DTYPES = ("float16", "float32")
COSINE_ERROR = 2e-4  # the bound tests hold float16 to on real sentences (measured max 4.8e-5, whitened)


def to_stored(raw: np.ndarray) -> tuple[bytes, str]:
    """The bytes Redis keeps for these rows, and their dtype's name."""
    raw = np.asarray(raw, dtype=np.float32)
    if raw.size and not np.all(np.abs(raw) < FLOAT16_LIMIT):
        return raw.tobytes(), "float32"
    return raw.astype(STORED).tobytes(), STORED


def from_stored(blobs: Sequence[bytes], dtypes: Sequence[str], dim: int, *, first_only: bool = False) -> np.ndarray:
    """float32 rows of every blob, in order (one decode when they share a dtype, as new records do); with
    `first_only`, each blob's first row alone (a document's first passage)."""
    if not blobs:
        return np.empty((0, dim), dtype=np.float32)
    unknown = set(dtypes) - set(DTYPES)
    if unknown:
        raise ValueError(f"stored vectors of unknown dtype {sorted(unknown)}")
    if first_only:
        blobs = [b[: np.dtype(t).itemsize * dim] for b, t in zip(blobs, dtypes, strict=True)]
    if len(set(dtypes)) == 1:
        return np.frombuffer(b"".join(blobs), dtype=dtypes[0]).astype(np.float32).reshape(-1, dim)
    return np.vstack(
        [np.frombuffer(b, dtype=t).astype(np.float32).reshape(-1, dim) for b, t in zip(blobs, dtypes, strict=True)]
    )
