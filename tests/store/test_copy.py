"""One Redis's dataset copied onto a Redis Cluster reads back the same, expiries kept."""

import pytest

from app.store import DocumentRecord, RedisStore
from app.store.copy import copy_keys, keys_under

pytestmark = pytest.mark.process


def test_a_dataset_copied_onto_a_cluster_reads_back_the_same(redis_url, redis_cluster, key_prefix):
    source = RedisStore.from_url(redis_url, prefix=key_prefix)
    for c in ("fp", "collection:a:1"):
        source.documents.put(c, [DocumentRecord(f"d{i}", f"t{i}", "{}", i.to_bytes(2, "little")) for i in range(1200)])
        source.replicas.report(c, "r1", "3-0", 60)
    source.artifacts.put("fp", "a1", b"artifact", make_current=True)
    dataset = source.store_id()  # what a server's snapshots name
    target = RedisStore.from_url(redis_cluster.url, prefix=key_prefix)
    seen: list[int] = []
    copied = copy_keys(source.client, target.client, key_prefix, seen.append)
    assert copied == keys_under(source.client, key_prefix) == sum(seen)
    for c in ("fp", "collection:a:1"):
        assert target.documents.count(c) == 1200 and target.documents.get(c, ["d7"]) == source.documents.get(c, ["d7"])
        assert target.changes.after(c, "0-0") == source.changes.after(c, "0-0")
        assert 0 < target.client.pttl(target.replicas._key(c, "r1")) <= 60_000
    assert target.artifacts.current_id("fp") == "a1" and target.artifacts.get("fp", "a1") == b"artifact"
    assert target.store_id() == dataset  # the same dataset: a snapshot taken on one opens on the other
