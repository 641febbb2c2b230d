"""Replica positions in a real Redis: kept while reported, gone once expired."""

import time


def test_replica_positions_expire(store):
    store.replicas.report("s", "r1", "5-0", ttl=0.3)
    store.replicas.report("s", "r2", "7-0", ttl=30)
    store.replicas.report("other", "r3", "1-0", ttl=30)
    assert sorted(store.replicas.live("s")) == ["5-0", "7-0"]
    time.sleep(0.5)
    assert store.replicas.live("s") == ["7-0"]
    store.replicas.forget("s", "r2")
    assert store.replicas.live("s") == []
