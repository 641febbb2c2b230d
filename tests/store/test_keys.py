"""Keys written in one transaction share a hash tag, so Redis Cluster puts them in one slot."""

import pytest
from redis.crc import key_slot

from app.store.keys import owned, tag, unowned


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
