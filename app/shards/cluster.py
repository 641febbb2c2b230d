"""The server's side of a sharded collection: the Ray cluster joined (or a local one started), the shards
deployed for the served correction, and the fan-out the search service queries."""

from __future__ import annotations

import logging
import os

from app.backbones.base import Backbone
from app.core.config import Settings
from app.correction.pipeline import Correction, pooling_weights
from app.correction.publication import publish
from app.shards.deployment import ShardConfig, deploy, undeploy
from app.shards.fanout import ShardedSearch
from app.store.redis_store import RedisStore

log = logging.getLogger(__name__)


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
        self.started = not ray.is_initialized()
        if self.started:
            ray.init(
                address=settings.ray_address or "local",
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
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

    def status(self) -> list[dict | None]:
        return self.search.status() if hasattr(self, "search") else []

    def close(self) -> None:
        import ray

        if not self.started:
            return
        try:
            undeploy(self.name)
        finally:
            ray.shutdown()
