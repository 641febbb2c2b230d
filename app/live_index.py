"""The search space the service serves, kept current in the background and swapped whole."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager

from app.core.errors import StoreUnavailable
from app.correction.artifact import Correction
from app.indexing import SearchSpace, SpaceKeeper

log = logging.getLogger(__name__)

# Returns the correction to serve when another one has been published, else None.
PublishedCorrection = Callable[[SearchSpace], Correction | None]


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
        follow_interval: float,
        snapshot_interval: float,
    ):
        self.keeper = keeper
        self._published = published
        self._follow_interval = follow_interval
        self._snapshot_interval = snapshot_interval
        self._lock = threading.RLock()
        self.space = keeper.open(correction)
        # What the snapshot on disk holds: (space, change); a space built from the store is worth one at once.
        self._snapshotted = (self.space, self.space.applied if keeper.opened["from"] == "snapshot" else None)
        self._snapshot_at = time.monotonic()
        self._rebuild: Future | None = None
        self._rebuild_target: str | None = None
        self._stop = threading.Event()
        self._follower = threading.Thread(target=self._follow, name="index-follower", daemon=True)
        self._follower.start()

    @contextmanager
    def writing(self) -> Iterator[SearchSpace]:
        """The current space, held still: no swap, catch-up or snapshot capture until the block ends."""
        with self._lock:
            yield self.space

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
                self.space = space
            self.snapshot()
            future.set_result(space.correction_id)
        except BaseException as exc:
            log.exception("index rebuild failed; the previous index keeps serving")
            future.set_exception(exc)

    def wait(self, timeout: float | None = None) -> None:
        """Block until a running rebuild has swapped in."""
        if self._rebuild is not None:
            self._rebuild.result(timeout)

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
        with self._lock:
            self.keeper.catch_up(self.space)
        space = self.space
        if self.rebuilding:
            return
        correction = self._published(space)
        if correction is not None:
            self.rebuild(correction, f"correction {correction.id} is current in redis")
        elif reason := space.index.rebuild_reason():
            self.rebuild(space.correction, reason)
        elif time.monotonic() - self._snapshot_at > self._snapshot_interval:
            self.snapshot()

    def snapshot(self) -> None:
        """Write the index to disk if it changed since the last snapshot (captured under the lock)."""
        with self._lock:
            space = self.space
            self.keeper.catch_up(space)  # so that `applied` covers this process's own latest writes too
            if self._snapshotted == (space, space.applied):
                self._snapshot_at = time.monotonic()
                return
            data, state = self.keeper.capture(space)
        self.keeper.write(data, state)
        self._snapshotted, self._snapshot_at = (space, state["applied"]), time.monotonic()

    def close(self) -> None:
        """Stop following, let a running rebuild finish, write the last snapshot."""
        self._stop.set()
        self._follower.join()
        if self._rebuild is not None:
            self._rebuild.exception()  # waits; a failed rebuild was logged where it failed
        try:
            self.snapshot()
        except Exception:  # the store may be gone; the next start rebuilds from it instead
            log.exception("index snapshot at shutdown failed")

    def crash(self) -> None:
        """Stop following without the final snapshot, as a kill would (tests use it)."""
        self._stop.set()
        self._follower.join()

    def status(self) -> dict:
        space = self.space
        return {
            **space.index.describe(),
            "applied_change": space.applied,
            "opened": self.keeper.opened,
            "rebuilding_for": self._rebuild_target if self.rebuilding else None,
        }
