"""Wiring: the store, the encoder, the correction, the served space and the services that use them, built once."""

from __future__ import annotations

import logging
from concurrent.futures import Future

from app.backbones.base import Backbone
from app.backbones.registry import build_backbone
from app.core.config import Settings
from app.correction.artifact import CorrectionArtifact
from app.correction.pipeline import Correction
from app.correction.registry import PublishedFollower, check_compatible, publish, resolve_correction
from app.engine.encoder import BatchingEngine
from app.index.faiss_index import VectorIndex
from app.index.live import LiveIndex, ServedSpace, WriterSpace
from app.index.space import SpaceKeeper
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
    return RedisStore.from_url(url, prefix=settings.key_prefix), embedded


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
        self.served = self._served_space(artifact, search)
        self.embedding = EmbeddingService(settings, engine, self.served)
        self.documents = DocumentService(store, self.served, self.embedding)
        self.search = SearchService(settings, store, self.served, self.embedding)

    def _served_space(self, artifact: CorrectionArtifact | None, search: bool) -> ServedSpace:
        """A server's LiveIndex; a writer only (`python -m app index`) needs no index: the servers follow it."""
        keeper = SpaceKeeper(
            self.store,
            self.backbone.fingerprint,
            self.backbone.dim,
            factory=self.settings.index_factory,
            recall=self.settings.index_recall,
            encode=self.engine.encode,
        )
        correction = Correction(artifact) if artifact else None
        if not search:
            return WriterSpace(keeper, correction)
        return LiveIndex(
            keeper,
            correction,
            published=PublishedFollower(self.settings.correction, self.store, self.backbone),
            snapshot_dir=self.settings.data_dir / "index",
            follow_interval=self.settings.follow_interval,
            snapshot_interval=self.settings.snapshot_interval,
            replica_timeout=self.settings.replica_timeout,
        )

    @classmethod
    def from_settings(cls, settings: Settings, backbone: Backbone | None = None, *, search: bool = True) -> Services:
        """Connect the store, load the backbone (in the encoder thread) and its correction, open the index."""
        store, embedded = connect_store(settings)
        engine = None
        try:
            engine = BatchingEngine(
                backbone or (lambda: build_backbone(settings)),
                max_queue_texts=settings.max_queue_texts,
                round_texts=settings.batch_size,
                request_timeout=settings.request_timeout,
            )
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
        self.served.close()
        self.engine.close()
        self.store.close()
        if self._embedded:
            self._embedded.stop()

    @property
    def correction(self) -> Correction | None:
        return self.served.space.correction

    @property
    def index(self) -> VectorIndex:
        return self.served.space.index

    @property
    def dim(self) -> int:
        correction = self.correction
        return correction.dim if correction else self.backbone.dim

    def publish_correction(self, artifact: CorrectionArtifact) -> Future:
        """Cache in Redis as current, then rebuild the index from raw vectors in the background and swap."""
        check_compatible(artifact, self.backbone)
        publish(self.store, artifact)
        return self.served.rebuild(Correction(artifact), f"correction {artifact.id} published")

    def readiness(self) -> dict[str, bool]:
        """What /ready checks: Redis answers and the encoder runs (the correction and index exist once the
        services do)."""
        return {"store": self.store.ping(), "encoder": self.engine.alive}

    def info(self) -> dict:
        space, backbone, settings = self.served.space, self.backbone, self.settings
        return {
            "backbone": {
                "name": backbone.name,
                "fingerprint": backbone.fingerprint,
                "pooling": backbone.pooling,
                "dim": backbone.dim,
                "max_length": backbone.max_length,
            },
            "correction": space.correction.artifact.metadata() if space.correction else None,
            "dim": self.dim,
            "search_space": space.describe_search(),
            "engine": self.engine.stats(),
            "index": self.served.status(),
            "limits": {
                "max_texts": settings.max_texts,
                "max_text_chars": settings.max_text_chars,
                "max_tokens": backbone.max_length,
                "max_body_bytes": settings.max_body_bytes,
                "max_k": settings.max_k,
                "max_queue_texts": settings.max_queue_texts,
            },
        }
