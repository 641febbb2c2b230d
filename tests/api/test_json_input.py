"""JSON read under one set of limits (nesting, integer digits), and the filter language fuzzed over real HTTP with
JSON of every type and depth, through GET and POST alike: no answer is a 5xx, GET and POST agree, and every accepted
filter selects exactly what a plain evaluation typed like JSON selects (true is not 1, integers and floats compare
exactly at any size), written here apart from the service's."""

from __future__ import annotations

import json
import operator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import serve_app

BIG = [2**53, 2**53 + 1, 2.0**53, 2**64, -(2**63), 1e16, 10**16, 10**16 + 1]
VALUES = [True, False, 0, 1, 1.0, 0.5, -3, None, "", "x", "1", "true", *BIG]
DOCS = {
    f"d{i:02d}": metadata
    for i, metadata in enumerate(
        [
            {"a": True},
            {"a": 1},
            {"a": 1.0, "b": "x"},
            {"a": [True, 2**53 + 1]},
            {"a": 2.0**53, "b": {"c": False}},
            {"a": 10**16 + 1, "b": [{"c": 1}, {"c": "1"}]},
            {"a": 1e16},
            {"a": None, "b": "true"},
            {"a": "x", "b": {"c": None}},
            {"a": [], "b": 0.5},
            {"b": -3},
            {},
            {"a": {"b": 2**64}},
            {"a": 0, "c": 1},
            {"a": False, "b": ["x", 0]},
            {"a": -(2**63)},
        ]
    )
}
N = len(DOCS)


def kind(v):
    return "null" if v is None else "bool" if isinstance(v, bool) else "number" if isinstance(v, int | float) else "str"


def reached(metadata, path: str) -> tuple[list, bool]:
    """The scalars a dotted path reaches (through objects and lists), and whether it reaches anything at all."""
    found, present = [], False
    level = [metadata]
    for part in path.split("."):
        nxt = []
        for item in level:
            for obj in item if isinstance(item, list) else [item]:
                if isinstance(obj, dict) and part in obj:
                    nxt.append(obj[part])
        level = nxt
    for item in level:
        present = True
        stack = [item]
        while stack:
            v = stack.pop()
            if isinstance(v, list):
                stack.extend(v)
            elif not isinstance(v, dict):
                found.append(v)
    return found, present


ORDER = {"$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}


def positive(v, op: str, operand) -> bool:
    if op == "$eq":
        return kind(v) == kind(operand) and v == operand
    if op == "$in":
        return any(positive(v, "$eq", o) for o in operand)
    return kind(v) == kind(operand) and kind(v) in ("number", "str") and ORDER[op](v, operand)


def holds(where: dict, metadata: dict) -> bool:
    return all(clause(key, value, metadata) for key, value in where.items())


def clause(key: str, value, metadata) -> bool:
    if key == "$and":
        return all(holds(w, metadata) for w in value)
    if key == "$or":
        return any(holds(w, metadata) for w in value)
    if key == "$not":
        return not holds(value, metadata)
    found, present = reached(metadata, key)
    if not isinstance(value, dict):
        value = {"$eq": value}
    result = True
    for op, operand in value.items():
        if op == "$not":
            result &= not clause(key, operand, metadata)
        elif op == "$exists":
            result &= present is operand
        elif op in ("$ne", "$nin"):
            result &= not any(positive(v, {"$ne": "$eq", "$nin": "$in"}[op], operand) for v in found)
        else:
            result &= any(positive(v, op, operand) for v in found)
    return result


scalars = st.sampled_from(VALUES) | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3)
keys = st.sampled_from(
    [
        "a",
        "b",
        "b.c",
        "a.b",
        "$and",
        "$or",
        "$not",
        "$eq",
        "$ne",
        "$in",
        "$nin",
        "$gt",
        "$gte",
        "$lt",
        "$lte",
        "$exists",
        "$nor",
        "",
        "a..b",
    ]
)
any_json = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4), max_leaves=24
)
operand = st.sampled_from(VALUES) | st.lists(st.sampled_from(VALUES), min_size=1, max_size=4)
field = st.dictionaries(
    st.sampled_from(["$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists"]),
    operand,
    min_size=1,
    max_size=2,
)
nested_not = st.recursive(field, lambda inner: st.builds(lambda f: {"$not": f}, inner), max_leaves=12)
well_formed = st.recursive(
    st.dictionaries(
        st.sampled_from(["a", "b", "b.c", "a.b"]), st.sampled_from(VALUES) | field | nested_not, min_size=1, max_size=3
    ),
    lambda inner: st.builds(
        lambda op, parts: {op: parts if op != "$not" else parts[0]},
        st.sampled_from(["$and", "$or", "$not"]),
        st.lists(inner, min_size=1, max_size=3),
    ),
    max_leaves=10,
)
deep = st.integers(9, 1500).map(
    lambda n: (
        json.loads('{"$not": ' * n + '{"a": 1}' + "}" * n) if n < 900 else '{"$and": [' * n + '{"a": 1}' + "]}" * n
    )
)


@pytest.fixture(scope="module")
def served(tmp_path_factory, redis_url):
    from app.core.config import Settings
    from app.main import create_app

    folder = tmp_path_factory.mktemp("filter-fuzz")
    config = Settings(
        backbone="hashing",
        redis_url=redis_url,
        key_prefix=folder.name,
        data_dir=folder / "data",
        models_dir=folder / "models",
        max_k=N,
    )
    with serve_app(create_app(config)) as client:
        docs = [{"id": d, "text": "a cat sleeps", "metadata": m} for d, m in DOCS.items()]
        for start in range(0, N, 8):
            assert client.post("/documents", json={"documents": docs[start : start + 8]}).status_code == 201
        yield client


def answer(client, where) -> tuple[int, set[str] | None, int, set[str] | None]:
    raw = where if isinstance(where, str) else json.dumps(where)
    got = client.get("/search", params={"q": "cat", "k": N, "mode": "dense", "filter": raw})
    body = f'{{"q": "cat", "mode": "dense", "k": {N}, "filter": {raw}}}'
    posted = client.post("/search", content=body, headers={"content-type": "application/json"})
    ids = [{h["id"] for h in r.json()["results"]} if r.status_code == 200 else None for r in (got, posted)]
    return got.status_code, ids[0], posted.status_code, ids[1]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=well_formed | any_json | deep)
def test_every_filter_is_answered_below_500_and_exactly_as_json_types_say(served, where):
    get_status, get_ids, post_status, post_ids = answer(served, where)
    assert get_status < 500 and post_status < 500, where
    assert get_status == post_status and get_ids == post_ids, where
    if get_status == 200:
        assert get_ids == {d for d, m in DOCS.items() if holds(where, m)}, where
    else:
        assert get_status == 422


def test_true_is_not_1_and_big_integers_compare_exactly(served):
    assert answer(served, {"a": {"$in": [True, 1]}})[1] == {"d00", "d01", "d02", "d03"}
    assert answer(served, {"a": {"$in": [1]}})[1] == {"d01", "d02"}
    assert answer(served, {"a": 2**53 + 1})[1] == {"d03"}
    assert answer(served, {"a": 2**53})[1] == {"d04"}
    assert answer(served, {"a": 10**16})[1] == {"d06"}
    assert answer(served, {"a": {"$gt": 10**16}})[1] == {"d05"}
    assert (
        answer(
            served,
            {"a": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$not": {"$eq": 1}}}}}}}}}}},
        )[0]
        == 422
    )  # a field's $not counts against the 8 levels too


def test_nesting_is_counted_without_recursion_and_each_limit_is_named():
    from app.api.json_input import MAX_NESTING, loads, nesting
    from app.core.errors import InvalidInput

    assert nesting(1) == 0 and nesting({"a": [1, {"b": []}]}) == 4
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    assert nesting(deep) == MAX_NESTING + 1  # stops reading past the bound
    for raw, says in (("[" * 3000 + "]" * 3000, "nests more"), ("1" * 4301, "4300 digits"), ("{", "not JSON")):
        with pytest.raises(InvalidInput, match=says):
            loads(raw, "filter")
