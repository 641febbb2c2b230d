"""The filter language: what each operator selects (by hand, with the plain evaluation), what it refuses (one line
naming the operator and the path); the strategies of random filters the field index's property test draws from."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from app.index import metadata_filter
from app.index.metadata_filter import FilterError, matches, parse

DOCS = {
    "a": {"lang": "en", "year": 2020, "tags": ["x", "y"], "author": {"name": "Ada", "born": 1815}},
    "b": {"lang": "en", "year": 2021.0, "tags": "x", "score": 0.5},
    "c": {"lang": "fr", "flag": True, "year": "2020", "author": [{"name": "Bo"}, {"name": "Cy"}]},
    "d": {},
    "e": {"lang": None, "tags": []},
}


OPERATOR_CASES = [
    ({"lang": "en"}, "ab"),
    ({"lang": {"$ne": "en"}}, "cde"),  # a missing field is not "en"
    ({"year": {"$gte": 2020, "$lt": 2021}}, "a"),  # "2020" is a string: not in a numeric range
    ({"year": {"$gt": "2019"}}, "c"),
    ({"year": 2021}, "b"),  # 2021.0 stored, 2021 asked
    ({"tags": "x"}, "ab"),  # list membership
    ({"tags": {"$in": ["y", "z"]}}, "a"),
    ({"tags": {"$nin": ["x"]}}, "cde"),
    ({"tags": {"$exists": True}}, "abe"),  # an empty list is present
    ({"score": {"$exists": False}}, "acde"),
    ({"author.name": "Cy"}, "c"),  # through a list of objects
    ({"author.born": {"$lt": 1900}}, "a"),
    ({"flag": 1}, ""),  # true is not 1
    ({"flag": True}, "c"),
    ({"lang": None}, "e"),  # null matches a stored null only
    ({"$or": [{"lang": "fr"}, {"score": {"$gt": 0.1}}]}, "bc"),
    ({"$and": [{"lang": "en"}, {"tags": "y"}]}, "a"),
    ({"$not": {"lang": "en"}}, "cde"),
    ({"year": {"$not": {"$gte": 2021}}}, "acde"),
    ({"lang": "en", "year": {"$in": [2020, 2022]}}, "a"),
]


@pytest.mark.parametrize(("where", "expected"), OPERATOR_CASES)
def test_each_operator_selects_what_its_definition_says(where, expected):
    assert {d for d, m in DOCS.items() if matches(parse(where), m)} == set(expected)


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ({}, "non-empty JSON object"),
        ({"price": {"$gt": [1]}}, "$gt at price"),
        ({"price": {"$between": 1}}, "unknown operator $between at price"),
        ({"$nor": [{"a": 1}]}, "unknown operator $nor"),
        ({"a": {"b": 1}}, "dotted path"),
        ({"a": [1, 2]}, "$eq at a"),
        ({"a": {"$in": []}}, "$in at a"),
        ({"a": {"$exists": 1}}, "$exists at a"),
        ({"$or": []}, "$or takes"),
        ({"a..b": 1}, "path 'a..b'"),
        ({"x": {"$gt": float("nan")}}, "finite"),
        ({"x": {"$gt": True}}, "$gt at x"),
    ],
)
def test_a_bad_filter_is_refused_in_one_line_naming_the_operator_and_path(where, says):
    with pytest.raises(FilterError) as refused:
        parse(where)
    assert says in str(refused.value) and "\n" not in str(refused.value)


def test_a_filter_holds_at_most_64_conditions():
    assert len(list(metadata_filter.conditions(parse({"$or": [{f"k{i}": i} for i in range(64)]})))) == 64
    with pytest.raises(FilterError, match="at most 64 conditions"):
        parse({"$or": [{f"k{i}": i} for i in range(65)]})


KEYS = ["a", "b", "c"]
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.5, 2.0, -1.5]), st.sampled_from("xyz")
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=2),
    max_leaves=6,
)
metadata = st.dictionaries(st.sampled_from(KEYS), values, max_size=3)
paths = st.sampled_from(["a", "b", "c", "a.b", "b.c", "a.a"])
operand = st.one_of(st.booleans(), st.integers(-3, 3), st.sampled_from([0.5, 2.0, -1.5]), st.sampled_from("xyz"))
ordered = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -1.5]), st.sampled_from("xyz"))
single = st.one_of(
    st.builds(lambda p, v: {p: v}, paths, st.one_of(scalars)),
    st.builds(lambda p, o, v: {p: {o: v}}, paths, st.sampled_from(["$eq", "$ne"]), scalars),
    st.builds(
        lambda p, o, v: {p: {o: v}}, paths, st.sampled_from(["$in", "$nin"]), st.lists(operand, min_size=1, max_size=3)
    ),
    st.builds(lambda p, o, v: {p: {o: v}}, paths, st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), ordered),
    st.builds(lambda p, v: {p: {"$exists": v}}, paths, st.booleans()),
)
filters = st.recursive(
    single,
    lambda inner: (
        st.builds(lambda o, fs: {o: fs}, st.sampled_from(["$and", "$or"]), st.lists(inner, min_size=1, max_size=3))
        | st.builds(lambda f: {"$not": f}, inner)
    ),
    max_leaves=8,
)
