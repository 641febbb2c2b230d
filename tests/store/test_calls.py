"""Any Redis failure is one error, a 503 the client can retry, raised where it happens."""

import pytest

from app.core.errors import StoreUnavailable
from app.store import DocumentRecord, RedisStore


def test_unreachable_redis_raises_store_unavailable(tmp_path):
    s = RedisStore.from_url(f"unix://{tmp_path}/no-such.sock")
    assert s.ping() is False
    with pytest.raises(StoreUnavailable, match="redis unavailable"):
        s.documents.put("s", [DocumentRecord("a", "t", "{}", b"")])
    assert StoreUnavailable.status == 503
