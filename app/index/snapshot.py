"""A search space on disk: written atomically, and read back only if it still belongs to this store and settings."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from app.correction.pipeline import Correction
from app.index.faiss_index import VectorIndex
from app.index.filters import FieldIndex
from app.index.space import SearchSpace
from app.store.redis_store import RedisStore, change_key

SNAPSHOT_FORMAT = 1


class SnapshotRefused(Exception):
    """A snapshot that must not be served (other store, other correction, gap in the change log, corrupt)."""


class SnapshotFile:
    """The snapshot of one backbone's search space, named by the store's key prefix and the space."""

    def __init__(self, store: RedisStore, space_id: str, folder: Path | None):
        self.store = store
        self.space_id = space_id
        tag = hashlib.sha256(f"{store.prefix}:{space_id}".encode()).hexdigest()[:16]
        self.path = Path(folder) / f"{tag}.npz" if folder else None

    def capture(self, space: SearchSpace) -> tuple[np.ndarray, dict]:
        """The bytes of a snapshot of `space`, taken while nothing writes to it (the caller holds the write lock)."""
        data, meta = space.index.state()
        state = {
            "format": SNAPSHOT_FORMAT,
            "store_id": self.store.store_id(),
            "space": self.space_id,
            "applied": space.applied,
            "index": meta,
            "fields": space.fields.state(),
            "sha256": hashlib.sha256(data.tobytes()).hexdigest(),
        }
        return data, state

    def write(self, data: np.ndarray, state: dict) -> Path | None:
        """Write a captured snapshot: a temporary file, fsync, then an atomic rename over the previous one."""
        if self.path is None:
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # A temporary file of this writer's own: the follower, a rebuild and shutdown may write at once.
        fd, tmp = tempfile.mkstemp(prefix=f"{self.path.stem}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, index=data, state=np.frombuffer(json.dumps(state).encode(), dtype=np.uint8))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        # Only what every live replica has applied: one that reported a position behind this one still needs
        # those entries (one that stopped reporting will see the gap when it returns, and rebuild).
        positions = [state["applied"], *self.store.live_positions(self.space_id)]
        self.store.trim_changes(self.space_id, min(positions, key=change_key))
        return self.path

    def load(self, correction: Correction | None, *, factory: str, recall: float) -> SearchSpace:
        """The space on disk, checked against the store, the correction and the index settings; not caught up."""
        if self.path is None or not self.path.exists():
            raise SnapshotRefused("no snapshot")
        try:
            with np.load(io.BytesIO(self.path.read_bytes()), allow_pickle=False) as z:
                data, state = z["index"], json.loads(z["state"].tobytes().decode())
        except Exception as exc:  # a truncated or foreign file: np.load and json raise many kinds
            raise SnapshotRefused(f"unreadable snapshot: {exc}") from exc
        try:
            self._check(state, data, correction.id if correction else None, factory, recall)
            return SearchSpace(
                correction, VectorIndex.from_state(data, state["index"]), FieldIndex.from_state(state["fields"]),
                state["applied"],
            )  # fmt: skip
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise SnapshotRefused(f"malformed snapshot: {exc!r}") from exc

    def _check(self, state: dict, data: np.ndarray, wanted: str | None, factory: str, recall: float) -> None:
        """Raise SnapshotRefused unless this snapshot belongs to this store, space, correction and settings."""
        index = state["index"]
        checks = [
            (state.get("format") == SNAPSHOT_FORMAT, "another snapshot format"),
            (state.get("sha256") == hashlib.sha256(data.tobytes()).hexdigest(), "checksum mismatch"),
            (state.get("store_id") == self.store.store_id(), "taken against another Redis dataset"),
            (state.get("space") == self.space_id, "another backbone's documents"),
            (index["correction_id"] == wanted, f"built with {index['correction_id']}, serving {wanted}"),
            (index["requested"] == factory, f"index {index['requested']}, settings {factory}"),
            (index["recall"] == recall, f"calibrated for recall {index['recall']}"),
            (
                change_key(state["applied"]) >= change_key(self.store.changes_trimmed_through(self.space_id)),
                "the change log no longer reaches back to it",
            ),
        ]
        for ok, why in checks:
            if not ok:
                raise SnapshotRefused(why)
