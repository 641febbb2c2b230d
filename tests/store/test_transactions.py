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


def _node(node_id: str, flags: str, master: str = "-", slots=(), connected: bool = True) -> dict:
    return {"node_id": node_id, "flags": flags, "master_id": master, "slots": list(slots), "connected": connected}


def test_a_write_is_refused_while_a_primary_is_down_or_short_of_replicas():
    from app.store.transactions import unacknowledged

    healthy = {"a:1": _node("A", "myself,master", slots=[["0", "16383"]]), "b:2": _node("B", "slave", "A")}
    assert unacknowledged(healthy, 1) is None
    down = {**healthy, "a:1": _node("A", "master,fail", slots=[["0", "16383"]], connected=False)}
    assert unacknowledged(down, 1) == "primary a:1 does not answer: its slots take no writes until a replica takes over"
    promoted = {"b:2": _node("B", "master", slots=[["0", "16383"]]), "a:1": _node("A", "master,fail", connected=False)}
    assert unacknowledged(promoted, 1) == "primary b:2 has 0 of the 1 replicas a write waits for"
    assert unacknowledged(promoted, 0) is None  # one Redis's promise: its append-only file, no replica waited for
