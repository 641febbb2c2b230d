"""The server's dense index of a sharded collection: the passages' keys without their vectors, which the shards
hold. It counts, upserts and removes as a VectorIndex does, so the server's lexical index, filters and change-log
bookkeeping are unchanged; searching it is a bug, refused."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

SHARDED = "shards"  # the index factory of a server whose vectors live in its shards (CE_SHARDS)


class KeyIndex:
    """Which passages are indexed, in `dim` dims, for `correction_id`; the vectors are in the shards."""

    factory = requested = SHARDED
    lossy = False
    dead = 0
    searched_with: dict[str, int] = {}
    params: dict[str, int] = {}

    def __init__(self, dim: int, *, correction_id: str | None = None, recall: float = 0.95, **_options: Any):
        self.dim = dim
        self.correction_id = correction_id
        self.recall = recall
        self._keys: set[str] = set()

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def keys(self) -> list[str]:
        return list(self._keys)

    def upsert(self, keys: Sequence[str], _vectors: np.ndarray | None = None) -> None:
        self._keys.update(keys)

    def remove(self, keys: Sequence[str]) -> int:
        present = [k for k in keys if k in self._keys]
        self._keys.difference_update(present)
        return len(present)

    def search(self, *_args: Any, **_kwargs: Any) -> list[list[tuple[str, float]]]:
        raise RuntimeError("a sharded collection's vectors are in its shards: search them (ShardedSearch)")

    def rebuild_reason(self) -> str | None:
        return None  # no structure to outgrow

    # --- the ChunkedBuild interface, so the builder fills either kind the same way ----------------------

    def add(self, keys: Sequence[str], _vectors: np.ndarray | None = None) -> None:
        self.upsert(keys)

    def finish(self, _exact: Any = None) -> KeyIndex:
        return self

    # --- persistence and description ------------------------------------------------------------------

    def memory_bytes(self) -> int:
        return 0

    def state(self) -> tuple[np.ndarray, dict[str, Any]]:
        meta = {
            "kind": SHARDED,
            "dim": self.dim,
            "requested": SHARDED,
            "correction_id": self.correction_id,
            "recall": self.recall,
            "keys": sorted(self._keys),
        }
        return np.zeros(0, dtype=np.uint8), meta

    @classmethod
    def from_state(cls, _data: np.ndarray, meta: dict[str, Any], **_options: Any) -> KeyIndex:
        index = cls(meta["dim"], correction_id=meta["correction_id"], recall=meta["recall"])
        index._keys = set(meta["keys"])
        return index

    def describe(self) -> dict[str, Any]:
        return {
            "size": len(self),
            "dim": self.dim,
            "factory": SHARDED,
            "requested": SHARDED,
            "params": {},
            "calibrated": {},
            "compressed": False,
            "tombstones": 0,
            "correction": self.correction_id,
        }
