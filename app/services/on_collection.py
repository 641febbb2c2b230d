"""What the documents and search services share: they work on one collection's store keys and served index."""

from __future__ import annotations

from app.index.live import ServedIndex
from app.services.embedding import EmbeddingService
from app.store.redis_store import RedisStore


class OnCollection:
    """A service on one collection: its documents in the store, its served index, the encoder it uses."""

    def __init__(self, store: RedisStore, served: ServedIndex, embedding: EmbeddingService):
        self.store = store
        self._served = served
        self._embedding = embedding
        self.collection_key = served.collection_key
