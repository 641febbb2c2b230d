"""Every store test runs on one Redis and on a Redis Cluster: the same keys, transactions and replies on both."""

import pytest

from app.store import RedisStore


@pytest.fixture(params=["one-redis", pytest.param("cluster", marks=pytest.mark.process)])
def store(request, redis_url, key_prefix):
    url = redis_url if request.param == "one-redis" else request.getfixturevalue("redis_cluster").url
    s = RedisStore.from_url(url, prefix=key_prefix)
    yield s
    s.close()
