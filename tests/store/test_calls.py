"""Any Redis failure is one error, a 503 the client can retry, raised where it happens."""

import pytest
import redis

from app.core.errors import StoreUnavailable
from app.store import DocumentRecord, RedisStore


def test_unreachable_redis_raises_store_unavailable(tmp_path):
    url = f"unix://{tmp_path}/no-such.sock"
    with pytest.raises(StoreUnavailable, match="redis unavailable"):
        RedisStore.from_url(url)  # connecting reads the dataset's key layout
    s = RedisStore(redis.Redis.from_url(url))  # as a store whose Redis went away after it connected
    assert s.ping() is False
    with pytest.raises(StoreUnavailable, match="redis unavailable"):
        s.documents.put("s", [DocumentRecord("a", "t", "{}", b"")])
