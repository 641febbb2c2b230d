"""The server's side of a sharded collection: the Ray cluster joined (or a local one started), the shards
deployed for the served correction, and the fan-out the search service queries."""

from __future__ import annotations

import logging
import os
import sys
import threading
import uuid
from collections.abc import Callable
from typing import Any

from app.backbones.base import Backbone
from app.core.children import tied_popen
from app.core.config import Settings
from app.correction.pipeline import Correction, pooling_weights
from app.correction.publication import publish
from app.shards.deployment import ShardConfig, deploy, undeploy
from app.shards.fanout import ShardedSearch
from app.shards.reaper import MARK
from app.store.redis_store import RedisStore

log = logging.getLogger(__name__)
_LOCAL_RAY: dict[str, Any] = {
    "started": False,
    "open": set(),
}  # a Ray instance this process started, and the collections on it
_RAY_LOCK = threading.Lock()
_RAY_OWNER_STOP = threading.Event()
_TEARDOWNS: list[threading.Thread] = []  # deleted collections' shards stopping, off the requests that deleted them


def settled() -> None:
    """Wait until every deleted collection's shards have stopped: Ray is then in one state to join, to deploy a
    collection of the same name on, or to stop."""
    while True:
        try:
            teardown = _TEARDOWNS.pop(0)
        except IndexError:  # none left (or another thread took the last)
            return
        teardown.join()


def join_ray(address: str | None) -> None:
    """ray.init on a thread that lives until Ray is shut down: the processes of a local instance are told to die
    with the thread that started them (PR_SET_PDEATHSIG), and a collection opens on a short-lived thread."""
    import ray

    started, failed = threading.Event(), []

    def own() -> None:
        watcher = None
        try:
            mark = os.environ[MARK] = uuid.uuid4().hex  # inherited by the processes ray.init starts, and only them
            ray.init(address=address or "local", include_dashboard=False, log_to_driver=False, configure_logging=False)
            if address is None:  # a local instance: ended with this process, kill -9 included (shards/reaper)
                watcher = tied_popen([sys.executable, "-m", "app.shards.reaper", str(os.getpid()), mark])
        except BaseException as exc:  # handed to the caller
            failed.append(exc)
        finally:
            os.environ.pop(MARK, None)
            started.set()
        _RAY_OWNER_STOP.wait()
        if watcher is not None:  # Ray has shut down: the watcher ends what may be left of it, then itself
            watcher.terminate()
            watcher.wait()

    _RAY_OWNER_STOP.clear()
    threading.Thread(target=own, name="ray-owner", daemon=True).start()
    started.wait()
    if failed:
        raise failed[0]


class ShardedCollection:
    """A collection's dense index on `settings.shards` Ray Serve shards. On a cluster the shards outlive this
    server (another may use them); a local Ray instance, and the shards on it, stop with it."""

    def __init__(
        self,
        settings: Settings,
        store: RedisStore,
        redis_url: str,
        collection_key: str,
        backbone: Backbone,
        correction: Correction | None,
    ):
        # Ray's failure-signal handler arms a 3 s alarm on SIGTERM that kills the process mid-shutdown (before the
        # index snapshot and the embedded Redis stop); the server handles SIGTERM itself. Read when ray is imported.
        os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")
        import ray

        if correction is not None and pooling_weights(correction.search) is not None:
            raise ValueError(
                f"correction {correction.id} pools with token weights (SIF): it encodes documents again, "
                "and shards hold no encoder; serve it unsharded (CE_SHARDS=0)"
            )
        self.name = collection_key
        settled()  # a collection of this name deleted a moment ago: its application goes first
        with _RAY_LOCK:
            if not ray.is_initialized():
                join_ray(settings.ray_address)
                _LOCAL_RAY["started"] = settings.ray_address is None
        self.started = _LOCAL_RAY["started"]  # then its shards stop with this process
        _LOCAL_RAY["open"].add(collection_key)
        try:
            if correction is not None:  # a bundled or file correction: the shards read it from Redis
                publish(store, correction.artifact, make_current=False)
            config = ShardConfig.of(
                settings,
                collection_key,
                backbone.dim,
                backbone.fingerprint,
                correction.id if correction else None,
                redis_url,
            )
            self.search = ShardedSearch(deploy(config, collection_key, settings.shards), settings.shard_timeout)
        except BaseException:
            self.close()
            raise
        log.info(
            "%d shards serve collection %s on Ray (%s)",
            settings.shards,
            collection_key,
            settings.ray_address or "a local instance",
        )

    def status(self) -> list[dict[str, Any] | None]:
        return self.search.status() if hasattr(self, "search") else []

    def close(self, *, deleted: bool = False, then: Callable[[], None] | None = None) -> None:
        """Stop its shards if they run on this process's Ray instance or the collection is deleted (else they serve
        on, for other servers); the last collection closed stops the Ray instance this process started. A deleted
        one's shards stop on a thread of their own: Ray Serve takes seconds to delete an application, and the
        request that deleted the collection does not wait for it (the next collection opened does); `then` runs once
        they have stopped (the deletion's erasing again, of what they wrote until then)."""
        _LOCAL_RAY["open"].discard(self.name)
        if deleted:
            teardown = threading.Thread(target=self._stop, args=(True, then), name=f"shards-stop-{self.name}")
            _TEARDOWNS.append(teardown)
            teardown.start()
        else:
            settled()
            self._stop(False)

    def _stop(self, deleted: bool, then: Callable[[], None] | None = None) -> None:
        import ray

        try:
            if self.started or deleted:
                undeploy(self.name)
        except Exception:  # on a thread of its own: said in the log, where the request that deleted it has returned
            if not deleted:
                raise
            log.exception("stopping the shards of deleted collection %s", self.name)
        finally:
            if self.started and not _LOCAL_RAY["open"]:
                _LOCAL_RAY["started"] = False
                ray.shutdown()
                _RAY_OWNER_STOP.set()
        try:
            if then is not None:
                then()
        except Exception:
            log.exception("erasing deleted collection %s once its shards stopped", self.name)
