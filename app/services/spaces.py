"""One collection's served space and the services on it, wired the same way for the default and named ones."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.config import Settings
from app.correction.pipeline import Correction
from app.engine.encoder import BatchingEngine
from app.index.lexical import Analyzer, remove_abandoned
from app.index.live import LiveIndex, PublishedCorrection, ServedSpace, WriterSpace
from app.index.passages import splitter_for
from app.index.space import SpaceKeeper
from app.services.documents import DocumentService
from app.services.embedding import EmbeddingService
from app.services.search import SearchService
from app.store.redis_store import RedisStore


@dataclass
class SpaceServices:
    """A served space (a server's LiveIndex, or a writer's WriterSpace) and the three services that use it."""

    served: ServedSpace
    embedding: EmbeddingService
    documents: DocumentService
    search: SearchService

    def close(self) -> None:
        self.served.close()


def open_space(
    settings: Settings,
    engine: BatchingEngine,
    store: RedisStore,
    correction: Correction | None,
    space_id: str,
    published: PublishedCorrection,
    *,
    search: bool = True,
) -> SpaceServices:
    """Open the space's index (snapshot or store) and build its services; a writer only needs no index."""
    analyzer = Analyzer(settings.lexical_language, settings.lexical_stopwords) if search else None
    work_dir = settings.data_dir / "lexical"
    remove_abandoned(work_dir)
    keeper = SpaceKeeper(store, space_id, engine.backbone.dim, factory=settings.index_factory,
                         recall=settings.index_recall, encode=engine.encode, analyzer=analyzer,
                         work_dir=work_dir)  # fmt: skip
    if search:
        served: ServedSpace = LiveIndex(
            keeper,
            correction,
            published=published,
            snapshot_dir=settings.data_dir / "index",
            follow_interval=settings.follow_interval,
            snapshot_interval=settings.snapshot_interval,
            replica_timeout=settings.replica_timeout,
        )
    else:
        served = WriterSpace(keeper, correction)
    embedding = EmbeddingService(settings, engine, served)
    documents = DocumentService(store, served, embedding, splitter_for(engine.backbone, settings))
    return SpaceServices(served, embedding, documents, SearchService(settings, store, served, embedding))
