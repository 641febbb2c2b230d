"""The search space's lifecycle: built from the store, kept current by its change log, snapshotted to disk."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from app.correction.artifact import Correction, project
from app.index.fields import FieldIndex
from app.index.vector_index import VectorIndex
from app.store.redis_store import DocumentRecord, RedisStore, change_key

log = logging.getLogger(__name__)
SNAPSHOT_FORMAT = 1
REPLAY_BATCH = 1000
POOL_BATCH = 256  # texts per call when documents are encoded again for a correction that pools its own way


@dataclass(eq=False)  # compared by identity: "is this still the space the snapshot holds"
class SearchSpace:
    """A correction, the index of documents corrected by it, their metadata filters, and how current they are."""

    correction: Correction | None
    index: VectorIndex
    fields: FieldIndex
    applied: str = "0-0"  # the newest change-log entry reflected here
    local: set[str] = field(default_factory=set)  # entries this process applied as it wrote them

    @property
    def correction_id(self) -> str | None:
        return self.correction.id if self.correction else None

    def remove(self, doc_ids: list[str]) -> int:
        """Take documents out of the index and the filters; returns how many the index held."""
        for doc_id in doc_ids:
            self.fields.remove(doc_id)
        return self.index.remove(doc_ids)


class SnapshotRefused(Exception):
    """A snapshot that must not be served (other store, other correction, gap in the change log, corrupt)."""


class SpaceKeeper:
    """Builds, catches up and snapshots the search spaces of one backbone's documents."""

    def __init__(
        self,
        store: RedisStore,
        space_id: str,
        raw_dim: int,
        *,
        factory: str = "auto",
        recall: float = 0.95,
        snapshot_dir: Path | None = None,
        pool: Callable[[list[str], np.ndarray], np.ndarray] | None = None,
    ):
        self.store = store
        self.pool = pool  # texts, token weights -> vectors: for a correction that pools its own way (SIF)
        self.space_id = space_id
        self.raw_dim = raw_dim
        self.factory = factory
        self.recall = recall
        self.opened: dict = {}  # how the serving space was opened: from a snapshot, or built and why
        tag = hashlib.sha256(f"{store.prefix}:{space_id}".encode()).hexdigest()[:16]
        self.snapshot_path = Path(snapshot_dir) / f"{tag}.npz" if snapshot_dir else None

    # --- building and following ---------------------------------------------------------------------

    def decode(self, docs: list[DocumentRecord]) -> np.ndarray:
        raw = np.frombuffer(b"".join(d.vector for d in docs), dtype=np.float32)
        return raw.reshape(len(docs), self.raw_dim)

    def vectors(self, docs: list[DocumentRecord], correction: Correction | None) -> np.ndarray:
        """Documents in `correction`'s space: their stored raw vectors, or their texts pooled its way (SIF)."""
        weights = correction.token_weights if correction else None
        if weights is None:
            return project(self.decode(docs), correction)
        if self.pool is None:
            raise RuntimeError(f"correction {correction.id} pools with token weights, and no encoder was given")
        texts = [d.text for d in docs]
        raw = [self.pool(texts[i : i + POOL_BATCH], weights) for i in range(0, len(texts), POOL_BATCH)]
        return project(np.concatenate(raw) if raw else self.decode([]), correction)

    def build(self, correction: Correction | None, *, progress: bool = False) -> SearchSpace:
        """Every stored document's raw vector, corrected, in a new index; then the changes made meanwhile."""
        started = time.monotonic()
        applied = self.store.last_change_id(self.space_id)
        ids, chunks, fields = [], [], FieldIndex()
        total = self.store.count_documents(self.space_id)
        with tqdm(total=total, desc="index: reading store", unit="doc", disable=not progress, leave=False) as bar:
            for batch in self.store.iter_documents(self.space_id):
                ids.extend(d.id for d in batch)
                chunks.append(self.vectors(batch, correction))
                for d in batch:
                    fields.upsert(d.id, json.loads(d.metadata_json))
                bar.update(len(batch))
        dim = correction.dim if correction else self.raw_dim
        vectors = np.concatenate(chunks) if chunks else np.empty((0, dim), dtype=np.float32)
        if len(set(ids)) != len(ids):  # SSCAN may return an id twice while Redis rehashes the set
            first: dict[str, int] = {}
            for row, doc_id in enumerate(ids):
                first.setdefault(doc_id, row)
            ids, vectors = list(first), vectors[list(first.values())]
        index = VectorIndex.build(
            dim, ids, vectors, factory=self.factory, correction_id=correction.id if correction else None,
            recall=self.recall,
        )  # fmt: skip
        space = SearchSpace(correction, index, fields, applied)
        self.catch_up(space)
        log.info(
            "index built in %.1f s: %d documents, %s, dim %d, params %s, correction %s",
            time.monotonic() - started, len(index), index.factory, dim, index.params, space.correction_id,
        )  # fmt: skip
        return space

    def empty(self, correction: Correction | None) -> SearchSpace:
        dim = correction.dim if correction else self.raw_dim
        self.opened = {"from": "nothing (writer only)"}
        return SearchSpace(
            correction,
            VectorIndex(dim, self.factory, correction_id=correction.id if correction else None),
            FieldIndex(),
        )

    def apply(self, space: SearchSpace, records: list[DocumentRecord]) -> None:
        """Put stored documents into a space (index and filters)."""
        if not records:
            return
        space.index.upsert([r.id for r in records], self.vectors(records, space.correction))
        for r in records:
            space.fields.upsert(r.id, json.loads(r.metadata_json))

    def catch_up(self, space: SearchSpace) -> int:
        """Apply the change-log entries newer than `space.applied`; it applies the stored state, so replays are safe."""
        applied = 0
        while changes := self.store.changes_after(self.space_id, space.applied, REPLAY_BATCH):
            for change in changes:
                if change.id in space.local:
                    space.local.discard(change.id)
                elif change.op == "delete":
                    space.remove(change.doc_ids)
                else:
                    records = self.store.get_documents(self.space_id, change.doc_ids)
                    self.apply(space, [r for r in records if r is not None])
                    space.remove([d for d, r in zip(change.doc_ids, records, strict=True) if r is None])
                space.applied = change.id
                applied += 1
        return applied

    # --- snapshots ---------------------------------------------------------------------------------------

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
        if self.snapshot_path is None:
            return None
        self.snapshot_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.snapshot_path.with_suffix(".tmp")
        with tmp.open("wb") as fh:
            np.savez(fh, index=data, state=np.frombuffer(json.dumps(state).encode(), dtype=np.uint8))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.snapshot_path)
        self.store.trim_changes(self.space_id, state["applied"])
        return self.snapshot_path

    def load(self, correction: Correction | None) -> SearchSpace:
        """The snapshot on disk, checked against the store and the correction, then caught up; else SnapshotRefused."""
        if self.snapshot_path is None or not self.snapshot_path.exists():
            raise SnapshotRefused("no snapshot")
        try:
            with np.load(io.BytesIO(self.snapshot_path.read_bytes()), allow_pickle=False) as z:
                data, state = z["index"], json.loads(z["state"].tobytes().decode())
        except Exception as exc:  # a truncated or foreign file: np.load and json raise many kinds
            raise SnapshotRefused(f"unreadable snapshot: {exc}") from exc
        wanted = correction.id if correction else None
        try:
            self._check(state, data, wanted)
            space = SearchSpace(
                correction, VectorIndex.from_state(data, state["index"]), FieldIndex.from_state(state["fields"]),
                state["applied"],
            )  # fmt: skip
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise SnapshotRefused(f"malformed snapshot: {exc!r}") from exc
        replayed = self.catch_up(space)
        stored = self.store.count_documents(self.space_id)
        if len(space.index) != stored:
            raise SnapshotRefused(f"{len(space.index)} documents after replay, the store holds {stored}")
        log.info("index loaded from snapshot: %d documents, %d changes replayed", len(space.index), replayed)
        return space

    def _check(self, state: dict, data: np.ndarray, wanted: str | None) -> None:
        """Raise SnapshotRefused unless this snapshot belongs to this store, space, correction and settings."""
        checks = [
            (state.get("format") == SNAPSHOT_FORMAT, "another snapshot format"),
            (state.get("sha256") == hashlib.sha256(data.tobytes()).hexdigest(), "checksum mismatch"),
            (state.get("store_id") == self.store.store_id(), "taken against another Redis dataset"),
            (state.get("space") == self.space_id, "another backbone's documents"),
            (
                state["index"]["correction_id"] == wanted,
                f"built with {state['index']['correction_id']}, serving {wanted}",
            ),
            (
                state["index"]["requested"] == self.factory,
                f"index {state['index']['requested']}, settings {self.factory}",
            ),
            (state["index"]["recall"] == self.recall, f"calibrated for recall {state['index']['recall']}"),
            (
                change_key(state["applied"]) >= change_key(self.store.changes_trimmed_through(self.space_id)),
                "the change log no longer reaches back to it",
            ),
        ]
        for ok, why in checks:
            if not ok:
                raise SnapshotRefused(why)

    def open(self, correction: Correction | None) -> SearchSpace:
        """The snapshot if it may be served, else a build from the store."""
        started = time.monotonic()
        try:
            space = self.load(correction)
            self.opened = {"from": "snapshot"}
        except SnapshotRefused as why:
            log.info("index snapshot not used (%s); building from the store", why)
            space = self.build(correction)
            self.opened = {"from": "store", "snapshot_refused": str(why)}
        self.opened["seconds"] = round(time.monotonic() - started, 3)
        return space
