"""The one filter language of every route that takes a filter: MongoDB's operators over documents' metadata, parsed
once into a tree that a plain evaluation (`matches`, the reference) and the field index (index/filters) both read.

A path is dotted (`a.b.c`) and walks into nested objects and through lists, so a path's values are every scalar it
reaches: `{"tags": ["x", "y"]}` has the values "x" and "y" at `tags`, and `{"tags": "x"}` matches it (list
membership). A condition holds when one of the path's values satisfies it; `$ne`, `$nin` and `$not` hold where the
positive form does not, a missing field included. Numbers compare with numbers exactly at any size (1 equals 1.0;
2**53 + 1 does not equal 2.0**53), strings with strings; a boolean equals only a boolean (true is not 1) and never
orders; null equals only a stored null. One depth bound counts every nesting: $and, $or, $not, a field's $not.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Union, cast

Scalar = str | bool | int | float | None  # what a condition compares with (and what a term of the index holds)
COMPARE = ("$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists")
LOGICAL = ("$and", "$or", "$not")
RANGE = ("$gt", "$gte", "$lt", "$lte")
MAX_CONDITIONS = 64  # conditions in one filter
MAX_DEPTH = 8  # nesting of $and / $or / $not, a field's $not included
MAX_KEYS = 32  # items of one filter object
MAX_LIST = 1024  # values of one $in / $nin
MAX_PATH = 256  # characters of a path


class FilterError(ValueError):
    """A filter that cannot be evaluated: the message names the operator and the path, in one line."""


@dataclass(frozen=True)
class Condition:
    """One operator on one path: `value` a scalar, a tuple of them ($in, $nin) or a boolean ($exists)."""

    path: str
    op: str
    value: Any


@dataclass(frozen=True)
class AllOf:
    parts: tuple[Filter, ...]


@dataclass(frozen=True)
class AnyOf:
    parts: tuple[Filter, ...]


@dataclass(frozen=True)
class Not:
    part: Filter


Filter = Union[Condition, AllOf, AnyOf, Not]  # noqa: UP007 - a forward-referencing alias needs the old form


def parse(raw: Any) -> Filter:
    """The tree of a filter as a request sends it, every operator, value and limit checked."""
    if not isinstance(raw, Mapping) or not raw:
        raise FilterError("a filter is a non-empty JSON object; leave it out to search everything")
    tree = _document(raw, 0)
    if (n := sum(1 for _ in conditions(tree))) > MAX_CONDITIONS:
        raise FilterError(f"a filter holds at most {MAX_CONDITIONS} conditions, this one {n}")
    return tree


def _deeper(depth: int) -> int:
    """One level further in: every nesting counts against the one bound."""
    if depth + 1 > MAX_DEPTH:
        raise FilterError(f"filters nest at most {MAX_DEPTH} deep ($and, $or and $not, on a field too)")
    return depth + 1


def _text(value: str, what: str) -> str:
    try:
        value.encode()
    except UnicodeEncodeError:
        raise FilterError(f"{what} holds a lone surrogate (an unpaired \\ud800-\\udfff escape)") from None
    return value


def _document(raw: Mapping[str, Any], depth: int) -> Filter:
    if len(raw) > MAX_KEYS:
        raise FilterError(f"a filter object holds at most {MAX_KEYS} items, this one {len(raw)}")
    parts = [_clause(_text(key, "a path"), value, depth) for key, value in raw.items()]
    return parts[0] if len(parts) == 1 else AllOf(tuple(parts))


def _clause(key: str, value: Any, depth: int) -> Filter:
    if key in ("$and", "$or"):
        if not isinstance(value, list) or not value or not all(isinstance(v, Mapping) and v for v in value):
            raise FilterError(f"{key} takes a non-empty list of non-empty filter objects")
        inner = _deeper(depth)
        parts = tuple(_document(v, inner) for v in value)
        return AllOf(parts) if key == "$and" else AnyOf(parts)
    if key == "$not":
        if not isinstance(value, Mapping) or not value:
            raise FilterError("$not takes a non-empty filter object")
        return Not(_document(value, _deeper(depth)))
    if key.startswith("$"):
        raise FilterError(f"unknown operator {key} at the top of the filter; logical ones: {', '.join(LOGICAL)}")
    if not key or len(key) > MAX_PATH or any(not part for part in key.split(".")):
        raise FilterError(f"path {key[:MAX_PATH]!r}: dotted names, none empty, at most {MAX_PATH} characters")
    if not isinstance(value, Mapping):
        return Condition(key, "$eq", _scalar(key, "$eq", value))
    if not value or not all(isinstance(op, str) and op.startswith("$") for op in value):
        raise FilterError(
            f"at {key}: an object of operators ({', '.join(COMPARE)}, $not); reach nested fields with a dotted path"
        )
    conditions = [_operator(key, op, v, depth) for op, v in value.items()]
    return conditions[0] if len(conditions) == 1 else AllOf(tuple(conditions))


def _operator(path: str, op: str, value: Any, depth: int) -> Filter:
    if op == "$not":
        if not isinstance(value, Mapping) or not value:
            raise FilterError(f'$not at {path}: takes an object of operators, such as {{"$gt": 5}}')
        return Not(_clause(path, value, _deeper(depth)))
    if op in ("$in", "$nin"):
        if not isinstance(value, list) or not value or len(value) > MAX_LIST:
            raise FilterError(f"{op} at {path}: takes a list of 1 to {MAX_LIST} values")
        scalars = (_scalar(path, op, v) for v in value)
        return Condition(path, op, tuple({(kind(v), v): v for v in scalars}.values()))  # true and 1 stay two
    if op == "$exists":
        if not isinstance(value, bool):
            raise FilterError(f"$exists at {path}: takes true or false, got {value!r}")
        return Condition(path, op, value)
    if op in RANGE:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise FilterError(f"{op} at {path}: compares with a number or a string, got {value!r}")
        return Condition(path, op, _scalar(path, op, value))
    if op in ("$eq", "$ne"):
        return Condition(path, op, _scalar(path, op, value))
    raise FilterError(f"unknown operator {op} at {path}; known: {', '.join(COMPARE)}, $not")


def _scalar(path: str, op: str, value: Any) -> Scalar:
    if isinstance(value, list | Mapping):
        raise FilterError(
            f"{op} at {path}: compares with a string, number, boolean or null, not {type(value).__name__}"
            " (a list field matches any one of its values; $in takes several)"
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise FilterError(f"{op} at {path}: {value} matches nothing; numbers must be finite")
    if isinstance(value, str):
        _text(value, f"{op} at {path}")
    return _stored(value)


def conditions(tree: Filter) -> Iterator[Condition]:
    """Every condition of the tree, depth first."""
    if isinstance(tree, Condition):
        yield tree
    elif isinstance(tree, Not):
        yield from conditions(tree.part)
    else:
        for part in tree.parts:
            yield from conditions(part)


def flatten(metadata: Mapping[str, Any] | None) -> tuple[dict[str, list[Scalar]], set[str]]:
    """Each path's scalar values (walking objects and lists), and every path present (a list or object included)."""
    values: dict[str, list[Scalar]] = {}
    present: set[str] = set()

    def walk(path: str, value: Any) -> None:
        present.add(path)
        if isinstance(value, Mapping):
            for key, inner in value.items():
                walk(f"{path}.{key}", inner)
        elif isinstance(value, list):
            for inner in value:
                walk(path, inner)
        else:
            values.setdefault(path, []).append(_stored(value))

    for key, value in (metadata or {}).items():
        walk(str(key), value)
    return values, present


def _stored(value: Any) -> Scalar:
    """A JSON scalar as the index keys it: a float holding an integer is that integer (exactly, at any size), so
    that 1e16 and 10**16 are one value in the index as they are in Python's comparison."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return cast(Scalar, value)


def kind(value: Scalar) -> str:
    """Which values compare with which: numbers with numbers, strings with strings; booleans and null alone."""
    if value is None or isinstance(value, bool):
        return "bool" if isinstance(value, bool) else "null"
    return "number" if isinstance(value, int | float) else "string"


def satisfies(value: Scalar, op: str, operand: Any) -> bool:
    """Whether one stored value satisfies a positive condition ($eq, $in or a range)."""
    if op == "$eq":
        return kind(value) == kind(operand) and value == operand
    if op == "$in":
        return any(satisfies(value, "$eq", v) for v in operand)
    if kind(value) != kind(operand) or kind(value) not in ("number", "string"):
        return False
    held, asked = cast(float | str, value), operand  # of one kind, numbers or strings, checked above
    return bool({"$gt": held > asked, "$gte": held >= asked, "$lt": held < asked, "$lte": held <= asked}[op])


POSITIVE = {"$ne": "$eq", "$nin": "$in"}


def matches(tree: Filter, metadata: Mapping[str, Any] | None) -> bool:
    """Whether a document's metadata passes the filter: the reference every index's answer must equal."""
    values, present = flatten(metadata)
    return _holds(tree, values, present)


def _holds(tree: Filter, values: dict[str, list[Scalar]], present: set[str]) -> bool:
    if isinstance(tree, AllOf):
        return all(_holds(part, values, present) for part in tree.parts)
    if isinstance(tree, AnyOf):
        return any(_holds(part, values, present) for part in tree.parts)
    if isinstance(tree, Not):
        return not _holds(tree.part, values, present)
    if tree.op == "$exists":
        return (tree.path in present) is tree.value
    if tree.op in POSITIVE:
        return not any(satisfies(v, POSITIVE[tree.op], tree.value) for v in values.get(tree.path, ()))
    return any(satisfies(v, tree.op, tree.value) for v in values.get(tree.path, ()))
