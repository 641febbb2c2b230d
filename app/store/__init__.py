"""Redis persistence: one connection, a store per concern (documents, artifacts, change log, replicas,
collections), all bytes; an embedded server by default."""

from app.store.documents import DocumentRecord
from app.store.embedded import EmbeddedRedis
from app.store.redis_store import RedisStore

__all__ = ["DocumentRecord", "EmbeddedRedis", "RedisStore"]
