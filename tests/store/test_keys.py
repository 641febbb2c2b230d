"""Keys written in one transaction share a hash tag, so Redis Cluster puts them in one slot."""

import pytest
from redis.crc import key_slot

from app.store.keys import owned, part_holding, partitioned, parts_of, shard_of, tag, unowned


def test_a_collections_keys_share_one_slot_and_two_collections_need_not():
    keys = [owned("ce", "doc", "collection:a:1", "d1"), owned("ce", "docs", "collection:a:1")]
    keys += [owned("ce", "changes", "collection:a:1"), owned("ce", "changes", "collection:a:1", "trimmed")]
    assert len({key_slot(k.encode()) for k in keys}) == 1
    slots = {key_slot(owned("ce", "docs", f"collection:c{i}:1").encode()) for i in range(20)}
    assert len(slots) > 10  # collections spread over the cluster


def test_the_layouts_differ_only_by_the_tag_and_an_owner_with_braces_is_refused():
    assert owned("ce", "doc", "fp", "a:b") == "ce:doc:{fp}:a:b"
    assert unowned("ce", "doc", "fp", "a:b") == "ce:doc:fp:a:b"
    with pytest.raises(ValueError, match="no braces"):
        tag("a{b}")


def test_a_partitioned_collection_routes_each_id_to_one_part_by_the_shards_hash():
    key = partitioned("collection:a:1", 3)
    assert key == "collection:a:1@3" and partitioned("fp", 0) == "fp"
    assert parts_of(key) == ["collection:a:1@3/0", "collection:a:1@3/1", "collection:a:1@3/2"]
    assert parts_of("fp") == ["fp"] and part_holding("fp", "x") == "fp"
    assert {part_holding(key, f"d{i}") for i in range(50)} == set(parts_of(key))
    assert all(part_holding(key, f"d{i}") == parts_of(key)[shard_of(f"d{i}", 3)] for i in range(50))
    slots = {key_slot(owned("ce", "docs", part).encode()) for part in parts_of(partitioned("collection:a:1", 8))}
    assert len(slots) == 8  # each part its own slot: a large collection spreads over the primaries
