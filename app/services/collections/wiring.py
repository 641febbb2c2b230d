"""One collection's served index and the services on it, wired the same way for the default and named ones."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.config import Settings
from app.correction.pipeline import Correction
from app.engine.encoder import BatchingEngine
from app.index.builder import IndexBuilder
from app.index.calibration import SearchDepth
from app.index.dense_lists import DenseSource
from app.index.key_index import SHARDED
from app.index.lexical import Analyzer, remove_abandoned
from app.index.live import LiveIndex, PublishedCorrection, ServedIndex
from app.index.passages import splitter_for
from app.index.writer import WriterIndex
from app.services.documents import DocumentService
from app.services.embedding import EmbeddingService
from app.services.search import SearchService
from app.store.redis_store import RedisStore


@dataclass
class CollectionServices:
    """A served index (a server's LiveIndex, or a writer's WriterIndex) and the three services that use it."""

    served: ServedIndex
    embedding: EmbeddingService
    documents: DocumentService
    search: SearchService

    def close(self) -> None:
        self.served.close()


def open_collection_services(
    settings: Settings,
    engine: BatchingEngine,
    store: RedisStore,
    correction: Correction | None,
    collection_key: str,
    published: PublishedCorrection,
    *,
    search: bool = True,
    dense: DenseSource | None = None,
) -> CollectionServices:
    """Open the collection's index (snapshot or store) and build its services; a writer only needs no index, and
    a sharded collection's server (`dense` its shards' list) only the keys of its vectors."""
    sharded = dense is not None
    analyzer = Analyzer(settings.lexical_language, settings.lexical_stopwords) if search else None
    work_dir = settings.data_dir / "lexical"
    remove_abandoned(work_dir)
    factory = SHARDED if sharded else settings.index_factory
    builder = IndexBuilder(
        store,
        collection_key,
        engine.backbone.dim,
        factory=factory,
        recall=settings.index_recall,
        depth=SearchDepth(settings.index_probe, settings.index_rerank),
        encode=engine.encode,
        analyzer=analyzer,
        work_dir=work_dir,
    )
    if search:
        served: ServedIndex = LiveIndex(
            builder,
            correction,
            published=published,
            snapshot_dir=settings.data_dir / "index",
            follow_interval=settings.follow_interval,
            snapshot_interval=settings.snapshot_interval,
            replica_timeout=settings.replica_timeout,
            verify_interval=settings.verify_interval,
        )
    else:
        served = WriterIndex(builder, correction)
    embedding = EmbeddingService(settings, engine, served)
    documents = DocumentService(store, served, embedding, splitter_for(engine.backbone, settings))
    search_service = SearchService(settings, store, served, embedding, dense)
    return CollectionServices(served, embedding, documents, search_service)
