"""The search index a process serves: opened from a snapshot or the store, kept current, swapped whole."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import Any, Literal, Protocol, overload

from app.core.errors import Conflict, StoreUnavailable
from app.correction.pipeline import Correction
from app.index.builder import ChangeLogGap, IndexBuilder
from app.index.compaction import QUIET_FOLLOWS, compact
from app.index.integrity import FULL_CHECK_DOCUMENTS, IntegrityCheck, check_counts, check_full
from app.index.search_index import SearchIndex
from app.index.snapshot import SnapshotFile, SnapshotRefused
from app.store.documents import DocumentRecord

log = logging.getLogger(__name__)


class ServedIndex(Protocol):
    """The index a process serves and writes through: a server's LiveIndex, or a writer's WriterIndex."""

    current: SearchIndex  # read once per request: its correction and its indexes agree
    collection_key: str  # where its documents live in the store
    builder: IndexBuilder  # how its documents become vectors
    integrity: IntegrityCheck | None  # its last comparison with the store

    def writing(self) -> AbstractContextManager[SearchIndex]: ...

    def wrote(self, index: SearchIndex, records: Sequence[DocumentRecord], change: str) -> None: ...

    def snapshot(self) -> None: ...

    def close(self) -> None: ...

    def status(self) -> dict[str, Any]: ...


# Given the id of the correction being served: the one to serve instead, when another has been published.
PublishedCorrection = Callable[[str | None], Correction | None]


class LiveIndex:
    """Follows the change log and the published correction; rebuilds in the background; snapshots when due.

    Readers take `current` once per request and use only it, so a query never mixes a correction with
    an index built by another. Writers go through `writing()`, which serializes them with the
    follower and with the final step of a rebuild.
    """

    def __init__(
        self,
        builder: IndexBuilder,
        correction: Correction | None,
        *,
        published: PublishedCorrection,
        snapshot_dir: Path | None,
        follow_interval: float,
        snapshot_interval: float,
        replica_timeout: float = 30.0,
        verify_interval: float = 300.0,
    ):
        self.builder = builder
        self.collection_key = builder.collection_key
        self.replica = uuid.uuid4().hex[:12]  # names the change-log position this process reports
        self._replica_timeout = replica_timeout
        part = builder.shard.name if builder.shard else None
        self.snapshots = SnapshotFile(builder.store, builder.collection_key, snapshot_dir, part=part)
        self._published = published
        self._follow_interval = follow_interval
        self._snapshot_interval = snapshot_interval
        self._lock = threading.RLock()
        self._verify_interval = verify_interval
        self.integrity: IntegrityCheck | None = None  # the last comparison with the store: /info and /metrics show it
        self.opened: dict[str, Any] = {}  # how the served index was opened: from a snapshot, or built and why
        self.current = self._open(correction)
        # What the snapshot on disk holds: (index, change); an index built from the store is worth one at once.
        self._snapshotted: tuple[SearchIndex, str | None] | None = (
            self.current,
            self.current.applied if self.opened["from"] == "snapshot" else None,
        )
        self._snapshot_at = self._verified_at = time.monotonic()
        self._rebuild: Future[Any] | None = None
        self._rebuild_target: str | None = None
        self._quiet = (self.current.applied, 0)  # the last change seen, and follower steps since it changed
        self._stop = threading.Event()
        self._follower = threading.Thread(target=self._follow, name="index-follower", daemon=True)
        self._follower.start()

    # --- opening -------------------------------------------------------------------------------------

    def _open(self, correction: Correction | None) -> SearchIndex:
        """The snapshot if it may be served, else a build from the store."""
        started = time.monotonic()
        try:
            index = self._from_snapshot(correction)
            self.opened = {"from": "snapshot"}
        except SnapshotRefused as why:
            log.info("index snapshot not used (%s); building from the store", why)
            index = self.builder.build(correction)
            self.opened = {"from": "store", "snapshot_refused": str(why)}
        self.opened["seconds"] = round(time.monotonic() - started, 3)
        return index

    def _from_snapshot(self, correction: Correction | None) -> SearchIndex:
        """The snapshot, caught up with the change log; refused if it then disagrees with the store's count."""
        builder = self.builder
        index = self.snapshots.load(correction, builder)
        try:
            try:
                replayed = builder.catch_up(index)
            except ChangeLogGap as gap:
                raise SnapshotRefused(str(gap)) from gap
            # Counts can agree while the ids do not (a leftover deleted document in place of a missing one).
            small = builder.shard is None and builder.stored_count() <= FULL_CHECK_DOCUMENTS
            check = check_full(builder, index) if small else check_counts(builder, index)
            if check is not None and check.drift:
                raise SnapshotRefused(f"after replay it differs from the store: {check.summary()}")
            self.integrity = check
        except BaseException:
            index.close()
            raise
        log.info("index loaded from snapshot: %d documents, %d changes replayed", index.documents, replayed)
        return index

    @contextmanager
    def writing(self) -> Iterator[SearchIndex]:
        """The current index, held still: no swap, catch-up or snapshot capture until the block ends."""
        with self._lock:
            yield self.current

    def wrote(self, index: SearchIndex, records: Sequence[DocumentRecord], change: str) -> None:
        """Index what this process just stored (inside `writing()`), so its own writes are searchable at once."""
        self.builder.apply(index, records)
        index.local.add(change)

    # --- rebuilds ------------------------------------------------------------------------------------

    @property
    def rebuilding(self) -> bool:
        return self._rebuild is not None and not self._rebuild.done()

    def rebuild(self, correction: Correction | None, reason: str) -> Future[Any]:
        """Start a rebuild for `correction` (one at a time); the future gives the new correction id."""
        with self._lock:
            if self._rebuild is not None and not self._rebuild.done():
                return self._rebuild
            log.info("index rebuild started: %s", reason)
            self._rebuild_target = correction.id if correction else None
            future: Future[Any] = Future()
            self._rebuild = future
        threading.Thread(target=self._run_rebuild, args=(correction, future), name="index-rebuild", daemon=True).start()
        return future

    def _run_rebuild(self, correction: Correction | None, future: Future[Any]) -> None:
        try:
            index = self.builder.build(correction)
            with self._lock:
                self.builder.catch_up(index)  # the writes made while it was built
                old, self.current = self.current, index
            old.close()  # a search still holding it reads files already open; the folder goes
            self.snapshot()
            future.set_result(index.correction_id)
        except BaseException as exc:
            log.exception("index rebuild failed; the previous index keeps serving")
            future.set_exception(exc)

    # --- following -------------------------------------------------------------------------------------

    def _follow(self) -> None:
        while not self._stop.wait(self._follow_interval):
            try:
                self.follow_once()
            except StoreUnavailable as exc:
                log.warning("index follower: %s", exc)
            except Exception:
                log.exception("index follower step failed")

    def caught_up(self) -> SearchIndex:
        """The index with every change logged so far applied: a reader that must see the writes acknowledged before
        it asked (a shard answering a search) calls this rather than wait for the next follower step. A trimmed log
        is left to the follower, which rebuilds."""
        with self._lock:
            with suppress(ChangeLogGap):
                self.builder.catch_up(self.current)
            return self.current

    def follow_once(self) -> None:
        """Apply other processes' writes, pick up a published correction, rebuild or snapshot when due."""
        gap = None
        with self._lock:
            try:
                self.builder.catch_up(self.current)
            except ChangeLogGap as exc:
                gap = exc
            index = self.current
        self.builder.store.replicas.report(self.collection_key, self.replica, index.applied, self._replica_timeout)
        if self.rebuilding:
            return
        correction = self._published(index.correction_id)
        if gap is not None:
            log.warning("index behind a trimmed change log (%s); rebuilding it from the store", gap)
            self.rebuild(correction or index.correction, str(gap))
        elif correction is not None:
            self.rebuild(correction, f"correction {correction.id} is current in redis")
        elif reason := index.dense.rebuild_reason():
            self.rebuild(index.correction, reason)
        elif (check := self._check_if_due(index)) is not None and check.drift:
            log.warning("index drifted from the store (%s); rebuilding it", check.summary())
            self.rebuild(index.correction, f"drift from the store: {check.summary()}")
        elif self._lexical_due(index):
            if compact(self.builder, index, self._lock, lambda: self.current):
                self._snapshotted = None  # the one on disk holds the old lexical index; a restart would load it
                self.snapshot()
        elif time.monotonic() - self._snapshot_at > self._snapshot_interval:
            self.snapshot()

    def _check_if_due(self, index: SearchIndex) -> IntegrityCheck | None:
        """Counts at every step once writes pause; every id each `verify_interval` (small indexes only)."""
        if self.builder.shard is not None:  # a shard counts its documents by scanning every id: too dear each step
            return None
        due = time.monotonic() - self._verified_at > self._verify_interval
        return self.verify(full=due and index.documents <= FULL_CHECK_DOCUMENTS)

    @overload
    def verify(self, *, full: Literal[True] = True) -> IntegrityCheck: ...
    @overload
    def verify(self, *, full: bool) -> IntegrityCheck | None: ...
    def verify(self, *, full: bool = True) -> IntegrityCheck | None:
        """Compare the store with both indexes (every id, or counts: None while writes are in flight)."""
        with self._lock:
            self.builder.catch_up(self.current)  # this process's own writes are then behind `applied` too
            index = self.current
            check = None if full else check_counts(self.builder, index)
        if full:
            check = check_full(self.builder, index)  # outside the lock: writes made meanwhile are left out
            self._verified_at = time.monotonic()
        if check is not None:
            self.integrity = check
        return check

    def _lexical_due(self, index: SearchIndex) -> bool:
        """Whether the lexical index counts dead versions and writes have paused for QUIET_FOLLOWS steps."""
        applied, steps = self._quiet
        self._quiet = (index.applied, steps + 1 if applied == index.applied else 0)
        return index.lexical is not None and index.lexical.dead > 0 and self._quiet[1] >= QUIET_FOLLOWS

    def snapshot(self) -> None:
        """Write the index to disk if it changed since the last snapshot (captured under the lock)."""
        with self._lock:
            index = self.current
            try:
                self.builder.catch_up(index)  # so that `applied` covers this process's own latest writes too
            except ChangeLogGap:
                return  # a stale index is not worth keeping; the follower rebuilds it
            if self._snapshotted == (index, index.applied):
                self._snapshot_at = time.monotonic()
                return
            data, state = self.snapshots.capture(index)
        self.snapshots.write(data, state)
        self._snapshotted, self._snapshot_at = (index, state["applied"]), time.monotonic()

    def close(self) -> None:
        """Stop following, let a running rebuild finish, write the last snapshot."""
        self._stop.set()
        self._follower.join()
        if self._rebuild is not None:
            self._rebuild.exception()  # waits; a failed rebuild was logged where it failed
        try:
            self.snapshot()
            self.builder.store.replicas.forget(self.builder.collection_key, self.replica)
        except Exception:  # the store may be gone; the next start rebuilds from it instead
            log.exception("index snapshot at shutdown failed")
        self.current.close()

    def status(self) -> dict[str, Any]:
        index = self.current
        return {
            **index.dense.describe(),
            "documents": index.documents,
            "lexical": index.lexical.describe() if index.lexical is not None else None,
            "applied_change": index.applied,
            "opened": self.opened,
            "rebuilding_for": self._rebuild_target if self.rebuilding else None,
            "integrity": self.integrity.describe() if self.integrity else None,
        }


def live(served: ServedIndex) -> LiveIndex:
    """The index a server serves, which rebuilds and verifies; a writer's (WriterIndex) does neither: 409."""
    if not isinstance(served, LiveIndex):
        raise Conflict("this process writes the collection without serving it: it neither rebuilds nor verifies")
    return served
