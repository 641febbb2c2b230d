"""One collection's served index and the services on it, wired the same way for the default and named ones."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.backbones.prompts import with_prompt
from app.core.config import Settings
from app.core.errors import InvalidInput
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
from app.shards.fanout import ShardedDense, ShardedLexical, StoredDocuments
from app.store.redis_store import RedisStore

if TYPE_CHECKING:
    from app.services.collections.spec import CollectionSpec
    from app.shards.cluster import ShardedCollection


@dataclass
class CollectionServices:
    """A served index (a server's LiveIndex, or a writer's WriterIndex) and the three services that use it."""

    served: ServedIndex
    embedding: EmbeddingService
    documents: DocumentService
    search: SearchService
    shards: ShardedCollection | None = None  # a collection kept in parts: its shards on Ray

    def close(self, *, deleted: bool = False, then: Callable[[], None] | None = None) -> None:
        """Close the index and the shards; `then` runs again once a deleted collection's shards have stopped."""
        self.served.close()
        if self.shards is not None:
            self.shards.close(deleted=deleted, then=then)


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
    shards: ShardedCollection | None = None,
) -> CollectionServices:
    """Open the collection's index (snapshot or store) and build its services; a writer only needs no index, a
    sharded collection's server (`dense` its shards' list, CE_SHARDS) only the keys of its vectors, and a collection
    kept in parts (`shards`: its shards search it every way) none."""
    lexical = None
    sharded = dense is not None or shards is not None
    search_here = search and shards is None
    analyzer = Analyzer.of(settings.search) if search_here else None
    work_dir = settings.data_dir / "lexical"
    remove_abandoned(work_dir)
    factory = SHARDED if sharded else settings.index_factory
    builder = IndexBuilder(
        store,
        collection_key,
        engine.backbone.dim,
        factory=factory,
        recall=settings.index_recall,
        depth=SearchDepth(settings.search.index_probe, settings.search.index_rerank),
        encode=with_prompt(engine.encode, engine.backbone.prompts.document),
        analyzer=analyzer,
        work_dir=work_dir,
    )
    if shards is not None:
        kept = store.documents
        stored = StoredDocuments(
            functools.partial(kept.ids, collection_key), functools.partial(kept.count, collection_key), builder.vectors
        )
        dense, lexical = ShardedDense(shards.search, stored), ShardedLexical(shards.search)
    if search_here:
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
    search_service = SearchService(settings, store, served, embedding, dense, lexical)
    return CollectionServices(served, embedding, documents, search_service, shards)


def open_shards(
    settings: Settings,
    store: RedisStore,
    redis_url: str | None,
    spec: CollectionSpec,
    engine: BatchingEngine,
    correction: Correction | None,
) -> ShardedCollection | None:
    """The shards of a collection kept in parts, started on Ray (None for a whole one)."""
    if not spec.shards:
        return None
    from app.shards.cluster import ShardedCollection

    if redis_url is None:
        raise InvalidInput("a collection kept in parts needs a store its shards can reach")
    shard_settings = settings.model_copy(update={"shards": spec.shards})
    return ShardedCollection(shard_settings, store, redis_url, spec.collection_key, engine.backbone, correction)
