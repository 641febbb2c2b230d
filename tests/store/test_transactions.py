"""A document write is acknowledged once kept as promised: on its slot's node, and on as many replicas as asked."""

import pytest
import redis

from app.core.errors import StoreUnavailable
from app.store import DocumentRecord, RedisStore
from app.store.transactions import TooFewReplicas, Transactions


def test_a_transaction_gives_its_commands_replies_unparsed(redis_url, key_prefix):
    client = redis.Redis.from_url(redis_url)
    done = Transactions(client).run(
        f"{key_prefix}:k", lambda pipe: (pipe.set(f"{key_prefix}:k", 1), pipe.incr(f"{key_prefix}:k"))
    )
    assert done == [b"OK", 2]


def test_a_write_no_replica_confirms_is_refused_with_a_503_yet_left_on_its_primary(redis_url, key_prefix):
    store = RedisStore.from_url(redis_url, prefix=key_prefix, wait_replicas=1)  # one Redis: it has no replica
    with pytest.raises(StoreUnavailable, match="TooFewReplicas"):
        store.documents.put("c", [DocumentRecord("a", "t", "{}", b"")])
    assert store.documents.count("c") == 1  # not acknowledged: a retry writes the same document again
    with pytest.raises(TooFewReplicas, match="reached 0 of the 1 replicas"):
        Transactions(store.client, 1).run(f"{key_prefix}:x", lambda pipe: pipe.set(f"{key_prefix}:x", 1))


def test_a_discarded_transaction_is_an_error_not_an_empty_success(redis_url, key_prefix):
    client = redis.Redis.from_url(redis_url)
    with pytest.raises(redis.ResponseError):
        Transactions(client).run("k", lambda pipe: pipe.execute_command("NO-SUCH-COMMAND"))


@pytest.mark.process
def test_on_a_cluster_a_write_waits_for_its_replica(redis_cluster, key_prefix):
    store = RedisStore.from_url(redis_cluster.url, prefix=key_prefix)
    assert store.wait_replicas == 1
    entry = store.documents.put("c", [DocumentRecord(f"d{i}", "t", "{}", b"") for i in range(50)])
    replica = redis.Redis(host="127.0.0.1", port=redis_cluster.replica_of(redis_cluster.primary_of("{c}")))
    replica.execute_command("READONLY")
    assert replica.scard(store.documents._ids_key("c")) == 50  # on the replica when acknowledged
    assert entry == store.changes.last_id("c")
