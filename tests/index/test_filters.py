"""Metadata filters: exact values matched, updates followed, a saved state read back."""

import pytest

from app.index.filters import FieldIndex, FilterError


def test_fields_match_exact_values_and_follow_updates():
    fields = FieldIndex()
    fields.upsert("a", {"lang": "en", "year": 2020, "tags": ["x"]})
    fields.upsert("b", {"lang": "en", "year": 2021.0})
    fields.upsert("c", {"lang": "fr", "flag": True})
    assert fields.matching({"lang": "en"}) == {"a", "b"}
    assert fields.matching({"lang": "en", "year": 2021}) == {"b"}
    assert fields.matching({"flag": 1}) == set()  # True is not 1
    fields.upsert("a", {"lang": "de"})
    assert fields.matching({"lang": "en"}) == {"b"} and fields.matching({"year": 2020}) == set()
    fields.remove("b")
    assert fields.matching({"lang": "en"}) == set()
    assert FieldIndex.from_state(fields.state()).matching({"lang": "de"}) == {"a"}
    with pytest.raises(FilterError, match="only strings"):
        fields.matching({"tags": ["x"]})
    with pytest.raises(FilterError, match="empty filter"):
        fields.matching({})
