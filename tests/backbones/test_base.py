"""A backbone's fingerprint: what determines its vectors, hashed the same way whatever the order of its parts."""

from __future__ import annotations

from app.backbones.base import Backbone, make_fingerprint
from app.backbones.hashing import HashingBackbone


def test_a_fingerprint_is_stable_and_changes_with_any_part():
    first = make_fingerprint(model="m", pooling="mean", dim=384)
    assert first == make_fingerprint(dim=384, pooling="mean", model="m") and len(first) == 16
    assert first != make_fingerprint(model="m", pooling="cls", dim=384)


def test_the_protocol_is_checked_by_shape():
    assert isinstance(HashingBackbone(), Backbone)
    assert not isinstance(object(), Backbone)
