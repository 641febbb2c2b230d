"""Where a bulk ingestion of a corpus file stopped, per collection: bytes, so a killed run resumes there."""

from __future__ import annotations

from app.store.calls import KeyedStore, blob, store_call


class IngestionCheckpoints(KeyedStore):
    """Moves each corpus's checkpoint as bytes under its collection; knows nothing of what they say."""

    def _key(self, collection_key: str) -> str:
        return self.owned_key("ingestion", collection_key)

    @store_call
    def get(self, collection_key: str, source: str) -> bytes | None:
        return blob(self.client.hget(self._key(collection_key), source))

    @store_call
    def put(self, collection_key: str, source: str, checkpoint: bytes) -> None:
        self.client.hset(self._key(collection_key), source, checkpoint)

    @store_call
    def drop(self, collection_key: str) -> None:
        self.client.delete(self._key(collection_key))
