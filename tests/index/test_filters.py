"""The field index: each operator answered from its lists (the same cases as the filter language's), updates and
removals followed, a saved state read back, and a property: it selects exactly what the plain evaluation selects."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.index.filters import FieldIndex
from app.index.metadata_filter import matches, parse
from tests.index.test_metadata_filter import DOCS, OPERATOR_CASES, filters, metadata


def index() -> FieldIndex:
    fields = FieldIndex()
    for doc_id, m in DOCS.items():
        fields.upsert(doc_id, m)
    return fields


@pytest.mark.parametrize(("where", "expected"), OPERATOR_CASES)
def test_each_operator_is_answered_from_the_lists(where, expected):
    assert index().matching(where) == set(expected)


def test_updates_and_removals_are_followed_and_a_saved_state_reads_back():
    fields = index()
    assert fields.matching({"year": {"$lte": 2021}}) == {"a", "b"}
    fields.upsert("a", {"year": 1999, "lang": "de"})
    fields.remove("b")
    assert fields.matching({"year": {"$lte": 2021}}) == {"a"} and fields.matching({"lang": {"$ne": "de"}}) == set("cde")
    again = FieldIndex.from_state(fields.state())
    assert again.matching({"year": {"$gt": 1000}}) == {"a"}
    assert again.matching({"tags": {"$exists": False}}) == {"a", "c", "d"}  # a's new metadata has no tags


@settings(max_examples=400, deadline=None)
@given(docs=st.lists(metadata, max_size=12), where=filters, removed=st.sets(st.integers(0, 11), max_size=3))
def test_the_field_index_selects_exactly_what_the_plain_evaluation_selects(docs, where, removed):
    fields = FieldIndex()
    for i, m in enumerate(docs):
        fields.upsert(f"d{i}", m)
    for i in removed & set(range(len(docs))):
        fields.remove(f"d{i}")
    kept = {f"d{i}": m for i, m in enumerate(docs) if i not in removed}
    tree = parse(where)
    assert fields.matching(where) == {d for d, m in kept.items() if matches(tree, m)}
    assert FieldIndex.from_state(fields.state()).matching(tree) == fields.matching(tree)
