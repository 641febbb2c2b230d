"""One Redis connection and the stores on it, one per concern; each only moves bytes."""

from __future__ import annotations

import uuid

import redis

from app.store.artifacts import ArtifactStore
from app.store.calls import store_call
from app.store.change_log import ChangeLog
from app.store.collection_store import CollectionStore
from app.store.documents import DocumentStore
from app.store.ingestion import IngestionCheckpoints
from app.store.judgments import JudgmentStore
from app.store.replicas import ReplicaPositions


class RedisStore:
    """Key layout under `prefix`: artifacts by backbone fingerprint; documents, change log, replica positions,
    ingestion checkpoints, judgments and the ranking tuned on them by collection key; collections' settings by name."""

    def __init__(self, client: redis.Redis, prefix: str = "ce"):
        self.client = client
        self.prefix = prefix
        self.artifacts = ArtifactStore(client, prefix)
        self.changes = ChangeLog(client, prefix)
        self.documents = DocumentStore(client, prefix, self.changes)
        self.replicas = ReplicaPositions(client, prefix)
        self.collections = CollectionStore(client, prefix)
        self.ingestion = IngestionCheckpoints(client, prefix)
        self.judgments = JudgmentStore(client, prefix)

    @classmethod
    def from_url(cls, url: str, prefix: str = "ce") -> RedisStore:
        client = redis.Redis.from_url(
            url, socket_timeout=5, socket_connect_timeout=2, health_check_interval=10, retry_on_timeout=True
        )
        return cls(client, prefix)

    def close(self) -> None:
        self.client.close()

    @store_call
    def store_id(self) -> str:
        """A random id created once per Redis dataset: a snapshot taken against another dataset is refused."""
        key = f"{self.prefix}:store-id"
        self.client.set(key, uuid.uuid4().hex, nx=True)
        return self.client.get(key).decode()

    def ping(self) -> bool:
        try:
            return bool(self.client.ping())
        except (redis.RedisError, OSError):
            return False

    def drop_collection(self, collection_key: str) -> int:
        """Delete a collection's documents, raw vectors, id set, change log, trim marker, replica positions,
        ingestion checkpoints, judgments and tuned ranking."""
        dropped = self.documents.drop(collection_key)
        self.changes.drop(collection_key)
        self.replicas.drop(collection_key)
        self.ingestion.drop(collection_key)
        self.judgments.drop(collection_key)
        return dropped
