"""The search space a process serves: opened from a snapshot or the store, kept current, swapped whole."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

from app.core.errors import StoreUnavailable
from app.correction.pipeline import Correction
from app.index.compaction import QUIET_FOLLOWS, compact
from app.index.snapshot import SnapshotFile, SnapshotRefused
from app.index.space import ChangeLogGap, SearchSpace, SpaceKeeper
from app.store.redis_store import DocumentRecord

log = logging.getLogger(__name__)


class ServedSpace(Protocol):
    """The space a process serves and writes through: a server's LiveIndex, or a writer's WriterSpace."""

    space: SearchSpace  # read once per request: its correction and its index agree
    space_id: str  # where its documents live in the store
    keeper: SpaceKeeper  # how its documents become vectors

    def writing(self) -> AbstractContextManager[SearchSpace]: ...

    def wrote(self, space: SearchSpace, records: list[DocumentRecord], change: str) -> None: ...

    def snapshot(self) -> None: ...

    def close(self) -> None: ...

    def status(self) -> dict: ...


# Given the id of the correction being served: the one to serve instead, when another has been published.
PublishedCorrection = Callable[[str | None], Correction | None]


class LiveIndex:
    """Follows the change log and the published correction; rebuilds in the background; snapshots when due.

    Readers take `space` once per request and use only it, so a query never mixes a correction with
    an index built by another. Writers go through `writing()`, which serializes them with the
    follower and with the final step of a rebuild.
    """

    def __init__(
        self,
        keeper: SpaceKeeper,
        correction: Correction | None,
        *,
        published: PublishedCorrection,
        snapshot_dir: Path | None,
        follow_interval: float,
        snapshot_interval: float,
        replica_timeout: float = 30.0,
    ):
        self.keeper = keeper
        self.space_id = keeper.space_id
        self.replica = uuid.uuid4().hex[:12]  # names the change-log position this process reports
        self._replica_timeout = replica_timeout
        self.snapshots = SnapshotFile(keeper.store, keeper.space_id, snapshot_dir)
        self._published = published
        self._follow_interval = follow_interval
        self._snapshot_interval = snapshot_interval
        self._lock = threading.RLock()
        self.opened: dict = {}  # how the served space was opened: from a snapshot, or built and why
        self.space = self._open(correction)
        # What the snapshot on disk holds: (space, change); a space built from the store is worth one at once.
        self._snapshotted = (self.space, self.space.applied if self.opened["from"] == "snapshot" else None)
        self._snapshot_at = time.monotonic()
        self._rebuild: Future | None = None
        self._rebuild_target: str | None = None
        self._quiet = (self.space.applied, 0)  # the last change seen, and follower steps since it changed
        self._stop = threading.Event()
        self._follower = threading.Thread(target=self._follow, name="index-follower", daemon=True)
        self._follower.start()

    # --- opening -------------------------------------------------------------------------------------

    def _open(self, correction: Correction | None) -> SearchSpace:
        """The snapshot if it may be served, else a build from the store."""
        started = time.monotonic()
        try:
            space = self._from_snapshot(correction)
            self.opened = {"from": "snapshot"}
        except SnapshotRefused as why:
            log.info("index snapshot not used (%s); building from the store", why)
            space = self.keeper.build(correction)
            self.opened = {"from": "store", "snapshot_refused": str(why)}
        self.opened["seconds"] = round(time.monotonic() - started, 3)
        return space

    def _from_snapshot(self, correction: Correction | None) -> SearchSpace:
        """The snapshot, caught up with the change log; refused if it then disagrees with the store's count."""
        keeper = self.keeper
        space = self.snapshots.load(correction, keeper)
        try:
            try:
                replayed = keeper.catch_up(space)
            except ChangeLogGap as gap:
                raise SnapshotRefused(str(gap)) from gap
            stored = keeper.store.count_documents(keeper.space_id)
            if space.documents != stored:
                raise SnapshotRefused(f"{space.documents} documents after replay, the store holds {stored}")
            if space.lexical is not None and len(space.lexical) != stored:
                raise SnapshotRefused(f"{len(space.lexical)} lexical documents after replay, the store holds {stored}")
        except BaseException:
            space.close()
            raise
        log.info("index loaded from snapshot: %d documents, %d changes replayed", space.documents, replayed)
        return space

    @contextmanager
    def writing(self) -> Iterator[SearchSpace]:
        """The current space, held still: no swap, catch-up or snapshot capture until the block ends."""
        with self._lock:
            yield self.space

    def wrote(self, space: SearchSpace, records: list[DocumentRecord], change: str) -> None:
        """Index what this process just stored (inside `writing()`), so its own writes are searchable at once."""
        self.keeper.apply(space, records)
        space.local.add(change)

    # --- rebuilds ------------------------------------------------------------------------------------

    @property
    def rebuilding(self) -> bool:
        return self._rebuild is not None and not self._rebuild.done()

    def rebuild(self, correction: Correction | None, reason: str) -> Future:
        """Start a rebuild for `correction` (one at a time); the future gives the new correction id."""
        with self._lock:
            if self.rebuilding:
                return self._rebuild
            log.info("index rebuild started: %s", reason)
            self._rebuild_target = correction.id if correction else None
            self._rebuild = future = Future()
        threading.Thread(target=self._run_rebuild, args=(correction, future), name="index-rebuild", daemon=True).start()
        return future

    def _run_rebuild(self, correction: Correction | None, future: Future) -> None:
        try:
            space = self.keeper.build(correction)
            with self._lock:
                self.keeper.catch_up(space)  # the writes made while it was built
                old, self.space = self.space, space
            old.close()  # a search still holding it reads files already open; the folder goes
            self.snapshot()
            future.set_result(space.correction_id)
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

    def follow_once(self) -> None:
        """Apply other processes' writes, pick up a published correction, rebuild or snapshot when due."""
        gap = None
        with self._lock:
            try:
                self.keeper.catch_up(self.space)
            except ChangeLogGap as exc:
                gap = exc
            space = self.space
        self.keeper.store.report_position(self.keeper.space_id, self.replica, space.applied, self._replica_timeout)
        if self.rebuilding:
            return
        correction = self._published(space.correction_id)
        if gap is not None:
            log.warning("index behind a trimmed change log (%s); rebuilding it from the store", gap)
            self.rebuild(correction or space.correction, str(gap))
        elif correction is not None:
            self.rebuild(correction, f"correction {correction.id} is current in redis")
        elif reason := space.index.rebuild_reason():
            self.rebuild(space.correction, reason)
        elif self._lexical_due(space):
            compact(self.keeper, space, self._lock, lambda: self.space)
        elif time.monotonic() - self._snapshot_at > self._snapshot_interval:
            self.snapshot()

    def _lexical_due(self, space: SearchSpace) -> bool:
        """Whether the lexical index counts dead versions and writes have paused for QUIET_FOLLOWS steps."""
        applied, steps = self._quiet
        self._quiet = (space.applied, steps + 1 if applied == space.applied else 0)
        return space.lexical is not None and space.lexical.dead > 0 and self._quiet[1] >= QUIET_FOLLOWS

    def snapshot(self) -> None:
        """Write the index to disk if it changed since the last snapshot (captured under the lock)."""
        with self._lock:
            space = self.space
            try:
                self.keeper.catch_up(space)  # so that `applied` covers this process's own latest writes too
            except ChangeLogGap:
                return  # a stale index is not worth keeping; the follower rebuilds it
            if self._snapshotted == (space, space.applied):
                self._snapshot_at = time.monotonic()
                return
            data, state = self.snapshots.capture(space)
        self.snapshots.write(data, state)
        self._snapshotted, self._snapshot_at = (space, state["applied"]), time.monotonic()

    def close(self) -> None:
        """Stop following, let a running rebuild finish, write the last snapshot."""
        self._stop.set()
        self._follower.join()
        if self._rebuild is not None:
            self._rebuild.exception()  # waits; a failed rebuild was logged where it failed
        try:
            self.snapshot()
            self.keeper.store.forget_position(self.keeper.space_id, self.replica)
        except Exception:  # the store may be gone; the next start rebuilds from it instead
            log.exception("index snapshot at shutdown failed")
        self.space.close()

    def status(self) -> dict:
        space = self.space
        return {
            **space.index.describe(),
            "documents": space.documents,
            "lexical": space.lexical.describe() if space.lexical is not None else None,
            "applied_change": space.applied,
            "opened": self.opened,
            "rebuilding_for": self._rebuild_target if self.rebuilding else None,
        }


class WriterSpace:
    """A writer's space (`python -m app index`): an empty index that follows nothing; the servers follow its writes."""

    def __init__(self, keeper: SpaceKeeper, correction: Correction | None):
        self.keeper = keeper
        self.space_id = keeper.space_id
        self.space = keeper.empty(correction)
        self._lock = threading.Lock()

    @contextmanager
    def writing(self) -> Iterator[SearchSpace]:
        with self._lock:
            yield self.space

    def wrote(self, space: SearchSpace, records: list[DocumentRecord], change: str) -> None:
        """Nothing to index: a writer's documents reach the servers through the change log."""

    def snapshot(self) -> None:
        """A writer keeps no index, so there is nothing to write."""

    def close(self) -> None:
        """Nothing runs in the background."""

    def status(self) -> dict:
        return self.space.index.describe()
