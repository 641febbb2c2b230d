"""Redis persistence: artifacts, documents and raw vectors as bytes; an embedded server by default."""

from app.store.embedded import EmbeddedRedis
from app.store.redis_store import DocumentRecord, RedisStore

__all__ = ["DocumentRecord", "EmbeddedRedis", "RedisStore"]
