"""Wiring: the store, the encoder, the correction, the served index and the services that use them, built once."""

from __future__ import annotations

import logging
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from app.backbones.base import Backbone
from app.backbones.local import model_description
from app.core.config import Settings
from app.correction.artifact import CorrectionArtifact
from app.correction.pipeline import Correction
from app.correction.publication import check_compatible, publish, resolve_correction
from app.engine.encoder import BatchingEngine
from app.engine.pool import EnginePool, engine_for
from app.index.faiss_index import VectorIndex
from app.index.key_index import KeyIndex
from app.index.live import ServedIndex, live
from app.services.collections.fit_jobs import FitJobs
from app.services.collections.manager import Collections
from app.services.collections.wiring import CollectionServices
from app.services.documents import DocumentService
from app.services.embedding import EmbeddingService
from app.services.search import SearchService
from app.store.embedded import EmbeddedRedis
from app.store.redis_store import RedisStore

log = logging.getLogger(__name__)
WARM_UP = "warm-up: the first forward pass allocates what the next ones reuse"


def connect_store(settings: Settings) -> tuple[RedisStore, EmbeddedRedis | None]:
    """The store at REDIS_URL, or on an embedded redis-server (returned too, so its owner can stop it)."""
    embedded = None
    url = settings.redis_url
    if not url:
        embedded = EmbeddedRedis(settings.data_dir / "redis")
        url = embedded.start()
    return RedisStore.from_url(url, prefix=settings.key_prefix, wait_replicas=settings.redis_wait_replicas), embedded


class Services:
    """What one process runs: the API's lifespan and the CLI hold one, and close it."""

    def __init__(
        self,
        settings: Settings,
        engine: BatchingEngine,
        store: RedisStore,
        artifact: CorrectionArtifact | None,
        *,
        embedded: EmbeddedRedis | None = None,
        search: bool = True,
    ):
        self.settings = settings
        self.engine = engine
        self.backbone: Backbone = engine.backbone
        self.store = store
        self._embedded = embedded
        correction = Correction(artifact) if artifact else None
        self.shards = None  # the default collection's dense index on Ray Serve shards (CE_SHARDS)
        dense = None
        url = settings.redis_url or (embedded.url if embedded else None)
        if settings.shards and search and url is not None:
            from app.shards.cluster import ShardedCollection
            from app.shards.fanout import ShardedDense

            self.shards = ShardedCollection(settings, store, url, self.backbone.fingerprint, self.backbone, correction)
            dense = ShardedDense(self.shards.search)
        self.engines = EnginePool(settings, engine)
        self.collections = Collections(
            settings, store, self.engines, correction, search=search, dense=dense, redis_url=url
        )
        self.fits = FitJobs(settings)
        self.tunes = FitJobs(settings, what="tune")

    @classmethod
    def from_settings(cls, settings: Settings, backbone: Backbone | None = None, *, search: bool = True) -> Services:
        """Connect the store, load the backbone (in the encoder thread) and its correction, open the index."""
        store, embedded = connect_store(settings)
        engine = None
        try:
            engine = engine_for(settings, backbone)
            artifact = resolve_correction(settings.correction, store, engine.backbone, settings.models_dir)
            services = cls(settings, engine, store, artifact, embedded=embedded, search=search)
            services.embedding.encode_raw([WARM_UP])
            return services
        except BaseException:
            if engine is not None:
                engine.close()
            store.close()
            if embedded:
                embedded.stop()
            raise

    def close(self) -> None:
        """Finish the queued encoding work and any rebuild, snapshot the index, then let go of the store."""
        self.fits.close()
        self.tunes.close()
        self.collections.close()
        if self.shards is not None:
            self.shards.close()
        self.engines.close()
        self.store.close()
        if self._embedded:
            self._embedded.stop()

    # The default collection's services, named here for the command line, benchmarks and tests: the routes take
    # them from `collections`, as every collection's.

    @property
    def default(self) -> CollectionServices:
        return self.collections.default.services

    @property
    def served(self) -> ServedIndex:
        """The default collection's served index."""
        return self.default.served

    @property
    def embedding(self) -> EmbeddingService:
        return self.default.embedding

    @property
    def documents(self) -> DocumentService:
        return self.default.documents

    @property
    def search(self) -> SearchService:
        return self.default.search

    @property
    def correction(self) -> Correction | None:
        return self.served.current.correction

    @property
    def index(self) -> VectorIndex | KeyIndex:
        return self.served.current.dense

    @property
    def dim(self) -> int:
        correction = self.correction
        return correction.dim if correction else self.backbone.dim

    def publish_correction(self, artifact: CorrectionArtifact) -> Future[Any]:
        """Cache in Redis as current, then rebuild the index from raw vectors in the background and swap."""
        check_compatible(artifact, self.backbone)
        publish(self.store, artifact)
        return live(self.served).rebuild(Correction(artifact), f"correction {artifact.id} published")

    def readiness(self) -> dict[str, bool]:
        """What /ready checks: Redis answers and the encoder runs (the correction and index exist once the
        services do)."""
        return {"store": self.store.ping(), "encoder": self.engine.alive}

    def writes(self) -> dict[str, Any]:
        """Whether a document write would be acknowledged now, and why not: reads and searches may still answer
        (from replicas, while a primary fails over), so /ready reports it beside its checks, not among them."""
        refused = self.store.writes_refused()
        return {"accepted": refused is None, "refused_because": refused}

    def info(self) -> dict[str, Any]:
        index, backbone, settings = self.served.current, self.backbone, self.settings
        return {
            "backbone": {
                "name": backbone.name,
                "fingerprint": backbone.fingerprint,
                "pooling": backbone.pooling,
                "runtime": backbone.runtime,
                "dim": backbone.dim,
                "max_length": backbone.max_length,
            },
            "model": model_description(backbone),
            "correction": index.correction.artifact.metadata() if index.correction else None,
            "dim": self.dim,
            "search_space": index.describe_search(),
            "ranking": self.search.served_ranking(index).describe() if self.search else None,
            "backbones_loaded": [f"{b}/{p}" + (f" ({Path(m).name})" if m else "") for b, p, m in self.engines.loaded()],
            "engine": self.engine.stats(),
            "index": {**self.served.status(), "shards": self.shards.status() if self.shards else None},
            "limits": {
                "max_texts": settings.max_texts,
                "max_text_chars": settings.max_text_chars,
                "max_tokens": backbone.max_length,
                "max_body_bytes": settings.max_body_bytes,
                "max_k": settings.max_k,
                "max_queue_texts": settings.max_queue_texts,
                "max_request_tokens": settings.max_request_tokens,
                "max_fits": settings.max_fits,
            },
        }
