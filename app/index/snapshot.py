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
from typing import Any

import numpy as np

from app.correction.pipeline import Correction
from app.index.builder import IndexBuilder
from app.index.faiss_index import VectorIndex
from app.index.filters import FieldIndex
from app.index.key_index import SHARDED, KeyIndex
from app.index.lexical import Analyzer, LexicalIndex
from app.index.search_index import SearchIndex
from app.store.change_log import change_key
from app.store.redis_store import RedisStore

SNAPSHOT_FORMAT = 4  # 2: the lexical index and the passages beside the FAISS index; 3: keys renamed; 4: metadata paths
LEXICAL_GRACE = 600.0  # seconds an unreferenced lexical snapshot is kept: another writer may be about to name it


class SnapshotRefused(Exception):
    """A snapshot that must not be served (other store, other correction, gap in the change log, corrupt)."""


class SnapshotFile:
    """The snapshot of one backbone's search space, named by the store's key prefix and the collection key."""

    def __init__(self, store: RedisStore, collection_key: str, folder: Path | None, *, part: str | None = None):
        self.store = store
        self.collection_key = collection_key
        self.part = part  # a shard's name: its snapshot is its own file, checked to be that shard's
        tag = hashlib.sha256(f"{store.prefix}:{collection_key}{':' + part if part else ''}".encode()).hexdigest()[:16]
        self.path = Path(folder) / f"{tag}.npz" if folder else None

    @property
    def file(self) -> Path:
        """The snapshot's file; an index kept without snapshots (no folder) has none."""
        if self.path is None:
            raise SnapshotRefused("this index keeps no snapshot")
        return self.path

    def capture(self, index: SearchIndex) -> tuple[np.ndarray, dict[str, Any]]:
        """The bytes of a snapshot of `index`, taken while nothing writes to it (the caller holds the write lock);
        the lexical index's files are hard-linked beside it now."""
        data, meta = index.dense.state()
        lexical = None
        if index.lexical is not None and self.path is not None:
            folder = self.path.parent / f"{self.path.stem}.lexical-{uuid.uuid4().hex[:12]}"
            index.lexical.link_into(folder)
            lexical = {"folder": folder.name, "analyzer": index.lexical.analyzer.describe(), "dead": index.lexical.dead}
        state = {
            "format": SNAPSHOT_FORMAT,
            "store_id": self.store.store_id(),
            "collection": self.collection_key,
            "part": self.part,
            "applied": index.applied,
            "dense": meta,
            "fields": index.fields.state(),
            "passages": index.passages,
            "lexical": lexical,
            "sha256": hashlib.sha256(data.tobytes()).hexdigest(),
        }
        return data, state

    def write(self, data: np.ndarray, state: dict[str, Any]) -> Path | None:
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
        positions = [state["applied"], *self.store.replicas.live(self.collection_key)]
        self.store.changes.trim(self.collection_key, min(positions, key=change_key))
        return self.path

    def delete(self) -> None:
        """The snapshot and every lexical index beside it (a collection deleted)."""
        if self.path is None:
            return
        self.path.unlink(missing_ok=True)
        for folder in self.file.parent.glob(f"{self.file.stem}.lexical-*"):
            shutil.rmtree(folder, ignore_errors=True)

    def _drop_old_lexical(self, kept: dict[str, Any] | None) -> None:
        """Lexical snapshots no snapshot names, once old enough that no writer is about to name them."""
        now = time.time()
        for folder in self.file.parent.glob(f"{self.file.stem}.lexical-*"):
            if (kept is None or folder.name != kept["folder"]) and now - folder.stat().st_mtime > LEXICAL_GRACE:
                shutil.rmtree(folder, ignore_errors=True)

    def load(self, correction: Correction | None, builder: IndexBuilder) -> SearchIndex:
        """The index on disk, checked against the store, the correction and the index settings; not caught up."""
        if self.path is None or not self.path.exists():
            raise SnapshotRefused("no snapshot")
        try:
            with np.load(io.BytesIO(self.path.read_bytes()), allow_pickle=False) as z:
                data, state = z["index"], json.loads(z["state"].tobytes().decode())
        except Exception as exc:  # a truncated or foreign file: np.load and json raise many kinds
            raise SnapshotRefused(f"unreadable snapshot: {exc}") from exc
        try:
            self._check(state, data, correction.id if correction else None, builder)
            kind = KeyIndex if state["dense"].get("kind") == SHARDED else VectorIndex
            dense = kind.from_state(data, state["dense"], depth=builder.depth)
            fields = FieldIndex.from_state(state["fields"])
            lexical = self._open_lexical(state["lexical"], builder)
            return SearchIndex(
                correction,
                dense,
                fields,
                state["applied"],
                lexical=lexical,
                passages={k: int(v) for k, v in state["passages"].items()},
            )
        except (KeyError, TypeError, ValueError, RuntimeError, OSError) as exc:
            raise SnapshotRefused(f"malformed snapshot: {exc!r}") from exc

    def _open_lexical(self, saved: dict[str, Any] | None, builder: IndexBuilder) -> LexicalIndex | None:
        if builder.analyzer is None:
            return None
        if saved is None:
            raise SnapshotRefused("the snapshot holds no lexical index")
        lexical = LexicalIndex.from_snapshot(
            self.file.parent / saved["folder"], builder.lexical_folder(), builder.analyzer, sentinel=builder.sentinel
        )
        lexical.dead = int(saved.get("dead", 0))  # its unmerged deleted versions still count until it is compacted
        return lexical

    def _check(self, state: dict[str, Any], data: np.ndarray, wanted: str | None, builder: IndexBuilder) -> None:
        """Raise SnapshotRefused unless this snapshot belongs to this store, collection, correction and settings."""
        dense, factory, recall, lexical = state["dense"], builder.factory, builder.recall, state.get("lexical")
        analyzer = Analyzer(**lexical["analyzer"]) if lexical else None
        checks = [
            (state.get("format") == SNAPSHOT_FORMAT, "another snapshot format"),
            (state.get("sha256") == hashlib.sha256(data.tobytes()).hexdigest(), "checksum mismatch"),
            (state.get("store_id") == self.store.store_id(), "taken against another Redis dataset"),
            (state.get("collection") == self.collection_key, "another collection's documents"),
            (state.get("part") == self.part, f"part {state.get('part')} of the collection, this is {self.part}"),
            (dense["correction_id"] == wanted, f"built with {dense['correction_id']}, serving {wanted}"),
            (dense["requested"] == factory, f"index {dense['requested']}, settings {factory}"),
            (dense["recall"] == recall, f"calibrated for recall {dense['recall']}"),
            (
                builder.analyzer is None or analyzer == builder.analyzer,
                f"lexical index {analyzer}, settings {builder.analyzer}",
            ),
            (lexical is None or (self.file.parent / lexical["folder"]).is_dir(), "its lexical index is gone"),
            (
                change_key(state["applied"]) >= change_key(self.store.changes.trimmed_through(self.collection_key)),
                "the change log no longer reaches back to it",
            ),
        ]
        for ok, why in checks:
            if not ok:
                raise SnapshotRefused(why)
