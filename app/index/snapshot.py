"""A search space on disk: written atomically, and read back only if it still belongs to this store and settings."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

from app.correction.pipeline import Correction
from app.index.faiss_index import VectorIndex
from app.index.filters import FieldIndex
from app.index.lexical import Analyzer, LexicalIndex
from app.index.space import SearchSpace, SpaceKeeper
from app.store.redis_store import RedisStore, change_key

SNAPSHOT_FORMAT = 2  # 2: the lexical index and the passages beside the FAISS index
LEXICAL_GRACE = 600.0  # seconds an unreferenced lexical snapshot is kept: another writer may be about to name it


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
        """The bytes of a snapshot of `space`, taken while nothing writes to it (the caller holds the write lock);
        the lexical index's files are hard-linked beside it now."""
        data, meta = space.index.state()
        lexical = None
        if space.lexical is not None and self.path is not None:
            folder = self.path.parent / f"{self.path.stem}.lexical-{uuid.uuid4().hex[:12]}"
            space.lexical.link_into(folder)
            lexical = {"folder": folder.name, "analyzer": space.lexical.analyzer.describe(), "dead": space.lexical.dead}
        state = {
            "format": SNAPSHOT_FORMAT,
            "store_id": self.store.store_id(),
            "space": self.space_id,
            "applied": space.applied,
            "index": meta,
            "fields": space.fields.state(),
            "passages": space.passages,
            "lexical": lexical,
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
        self._drop_old_lexical(state.get("lexical"))
        # Only what every live replica has applied: one that reported a position behind this one still needs
        # those entries (one that stopped reporting will see the gap when it returns, and rebuild).
        positions = [state["applied"], *self.store.live_positions(self.space_id)]
        self.store.trim_changes(self.space_id, min(positions, key=change_key))
        return self.path

    def delete(self) -> None:
        """The snapshot and every lexical index beside it (a collection deleted)."""
        if self.path is None:
            return
        self.path.unlink(missing_ok=True)
        for folder in self.path.parent.glob(f"{self.path.stem}.lexical-*"):
            shutil.rmtree(folder, ignore_errors=True)

    def _drop_old_lexical(self, kept: dict | None) -> None:
        """Lexical snapshots no snapshot names, once old enough that no writer is about to name them."""
        now = time.time()
        for folder in self.path.parent.glob(f"{self.path.stem}.lexical-*"):
            if (kept is None or folder.name != kept["folder"]) and now - folder.stat().st_mtime > LEXICAL_GRACE:
                shutil.rmtree(folder, ignore_errors=True)

    def load(self, correction: Correction | None, keeper: SpaceKeeper) -> SearchSpace:
        """The space on disk, checked against the store, the correction and the index settings; not caught up."""
        if self.path is None or not self.path.exists():
            raise SnapshotRefused("no snapshot")
        try:
            with np.load(io.BytesIO(self.path.read_bytes()), allow_pickle=False) as z:
                data, state = z["index"], json.loads(z["state"].tobytes().decode())
        except Exception as exc:  # a truncated or foreign file: np.load and json raise many kinds
            raise SnapshotRefused(f"unreadable snapshot: {exc}") from exc
        try:
            self._check(state, data, correction.id if correction else None, keeper)
            index = VectorIndex.from_state(data, state["index"])
            fields = FieldIndex.from_state(state["fields"])
            lexical = self._open_lexical(state["lexical"], keeper)
            return SearchSpace(correction, index, fields, state["applied"], lexical=lexical,
                               passages={k: int(v) for k, v in state["passages"].items()})  # fmt: skip
        except (KeyError, TypeError, ValueError, RuntimeError, OSError) as exc:
            raise SnapshotRefused(f"malformed snapshot: {exc!r}") from exc

    def _open_lexical(self, saved: dict | None, keeper: SpaceKeeper) -> LexicalIndex | None:
        if keeper.analyzer is None:
            return None
        lexical = LexicalIndex.from_snapshot(
            self.path.parent / saved["folder"], keeper.lexical_folder(), keeper.analyzer
        )
        lexical.dead = int(saved.get("dead", 0))  # its unmerged deleted versions still count until it is compacted
        return lexical

    def _check(self, state: dict, data: np.ndarray, wanted: str | None, keeper: SpaceKeeper) -> None:
        """Raise SnapshotRefused unless this snapshot belongs to this store, space, correction and settings."""
        index, factory, recall, lexical = state["index"], keeper.factory, keeper.recall, state.get("lexical")
        analyzer = Analyzer(**lexical["analyzer"]) if lexical else None
        checks = [
            (state.get("format") == SNAPSHOT_FORMAT, "another snapshot format"),
            (state.get("sha256") == hashlib.sha256(data.tobytes()).hexdigest(), "checksum mismatch"),
            (state.get("store_id") == self.store.store_id(), "taken against another Redis dataset"),
            (state.get("space") == self.space_id, "another backbone's documents"),
            (index["correction_id"] == wanted, f"built with {index['correction_id']}, serving {wanted}"),
            (index["requested"] == factory, f"index {index['requested']}, settings {factory}"),
            (index["recall"] == recall, f"calibrated for recall {index['recall']}"),
            (
                keeper.analyzer is None or analyzer == keeper.analyzer,
                f"lexical index {analyzer}, settings {keeper.analyzer}",
            ),
            (lexical is None or (self.path.parent / lexical["folder"]).is_dir(), "its lexical index is gone"),
            (
                change_key(state["applied"]) >= change_key(self.store.changes_trimmed_through(self.space_id)),
                "the change log no longer reaches back to it",
            ),
        ]
        for ok, why in checks:
            if not ok:
                raise SnapshotRefused(why)
