"""A dataset written before the cluster (untagged keys) is moved to tagged keys once, by whoever connects first,
and reads back whole through the stores."""

import threading

import pytest
import redis

from app.store import RedisStore
from app.store.keys import LAYOUT, unowned
from app.store.migration import ensure_layout, layout_key, renamed

DEFAULT = "0123456789abcdef"  # the default collection is keyed by its backbone's fingerprint
NAMED = "collection:cats:9f3a"  # a named one by name and uid: colons, as a document id may hold


def write_layout_1(client: redis.Redis, prefix: str, docs: int = 30) -> None:
    """What the service wrote before tags, key by key."""
    for owner in (DEFAULT, NAMED):
        for i in range(docs):
            client.hset(unowned(prefix, "doc", owner, f"d:{i}"), mapping={"text": f"t{i}", "metadata": "{}"})
            client.hset(unowned(prefix, "doc", owner, f"d:{i}"), mapping={"vector": b"", "dtype": "float32"})
            client.sadd(unowned(prefix, "docs", owner), f"d:{i}")
        client.xadd(unowned(prefix, "changes", owner), {"op": "upsert", "ids": '["d:0"]'})
        client.set(unowned(prefix, "changes", owner, "trimmed"), "0-1")
        client.set(unowned(prefix, "changes", owner, "at", "replica-1"), "5-0", px=600_000)
        client.hset(unowned(prefix, "ingestion", owner), "corpus.jsonl", b'{"lineno": 7}')
        client.hset(unowned(prefix, "judgments", owner), "q\x1fd:1", 2)
        client.set(unowned(prefix, "ranking", owner), '{"weight": 0.5}')
    client.set(unowned(prefix, "artifact", DEFAULT, "v:a1"), b"artifact")
    client.zadd(unowned(prefix, "artifact", DEFAULT, "versions"), {"a1": 1.0})
    client.set(unowned(prefix, "artifact", DEFAULT, "current"), "a1")
    client.hset(f"{prefix}:collections", "cats", b"{}")
    client.set(f"{prefix}:store-id", "abc")


def test_an_untagged_dataset_reads_back_whole_after_the_first_connection(redis_url, key_prefix):
    client = redis.Redis.from_url(redis_url)
    write_layout_1(client, key_prefix)
    before = client.pttl(unowned(key_prefix, "changes", NAMED, "at", "replica-1"))
    store = RedisStore.from_url(redis_url, prefix=key_prefix)
    for owner in (DEFAULT, NAMED):
        assert store.documents.count(owner) == 30
        docs = store.documents.get(owner, ["d:0", "d:29", "d:30"])
        assert [d.text if d else None for d in docs] == ["t0", "t29", None]
        changes, trimmed = store.changes.after(owner, "0-0")
        assert [c.doc_ids for c in changes] == [["d:0"]] and trimmed == "0-1"
        assert store.replicas.live(owner) == ["5-0"]
        assert store.ingestion.get(owner, "corpus.jsonl") == b'{"lineno": 7}'
        assert store.judgments.all(owner) == [("q", "d:1", 2)]
        assert store.judgments.published_ranking(owner) == {"weight": 0.5}
    assert store.artifacts.get(DEFAULT, "a1") == b"artifact" and store.artifacts.current_id(DEFAULT) == "a1"
    assert store.artifacts.versions(DEFAULT) == ["a1"] and store.store_id() == "abc"
    assert 0 < client.pttl(store.replicas._key(NAMED, "replica-1")) <= before  # a replica's expiry is kept
    left = [k.decode() for k in client.scan_iter(match=f"{key_prefix}:*")]
    assert [k for k in left if renamed(key_prefix, k, {DEFAULT, NAMED})] == []
    assert client.get(layout_key(key_prefix)) == LAYOUT.encode()
    store.close()


def test_processes_connecting_at_once_move_the_dataset_once(redis_url, key_prefix):
    write_layout_1(redis.Redis.from_url(redis_url), key_prefix, docs=2000)
    moved: list[int] = []
    threads = [
        threading.Thread(target=lambda: moved.append(ensure_layout(redis.Redis.from_url(redis_url), key_prefix)))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # one process renamed every key (documents, and seven more per collection, three of the artifact's) but the
    # collections' settings and the store's id; the three others waited for it
    assert sorted(moved) == [0, 0, 0, 2 * 2000 + 2 * 7 + 3]
    assert RedisStore.from_url(redis_url, prefix=key_prefix).documents.count(NAMED) == 2000


def test_a_key_of_no_known_collection_is_left_as_it_is():
    assert renamed("ce", "ce:doc:somewhere:x", {"fp"}) is None
    assert renamed("ce", "ce:doc:{fp}:x", {"fp"}) is None
    assert renamed("ce", "ce:collections", {"fp"}) is None
    assert renamed("ce", "ce:doc:fp:x:y", {"fp", "fp:x"}) == "ce:doc:{fp:x}:y"  # the longest owner that fits


@pytest.mark.parametrize("kind", ["docs", "ingestion", "judgments", "ranking"])
def test_each_kind_owned_by_a_collection_is_tagged(kind):
    assert renamed("ce", f"ce:{kind}:{NAMED}", {NAMED}) == f"ce:{kind}:{{{NAMED}}}"


@pytest.mark.process
def test_an_untagged_dataset_on_a_cluster_is_refused_with_the_way_over(redis_cluster, key_prefix):
    client = redis.RedisCluster(host="127.0.0.1", port=redis_cluster.ports[0])
    client.sadd(unowned(key_prefix, "docs", NAMED), "d:1")  # as if copied over without its move
    with pytest.raises(RuntimeError, match="copy-store"):
        RedisStore.from_url(redis_cluster.url, prefix=key_prefix)
    assert client.get(layout_key(key_prefix)) is None  # nothing half-moved is called moved
