"""Metadata filters answered from an index kept beside the vectors: each (path, value) term's documents, each path's
documents, and each path's values sorted for ranges, so a filter (index/metadata_filter) becomes a set of ids."""

from __future__ import annotations

import bisect
import json
import threading
from collections.abc import Mapping, Set
from typing import Any

from app.index.metadata_filter import (
    POSITIVE,
    AllOf,
    AnyOf,
    Condition,
    Filter,
    Not,
    flatten,
    kind,
    parse,
)

NONE: frozenset[str] = frozenset()


def _term(path: str, value: Any) -> str:
    """A path's value as one key: `["price", 5]`."""
    return json.dumps([path, value])


def _presence(path: str) -> str:
    """A path's presence as one key: `["price"]`, which no value's key can equal."""
    return json.dumps([path])


def _terms(metadata: Mapping[str, Any] | None) -> list[str]:
    values, present = flatten(metadata)
    terms = {_term(path, v) for path, vs in values.items() for v in vs}
    return sorted(terms | {_presence(path) for path in present})


class FieldIndex:
    """Inverted lists from (path, value) and from each present path to document ids; every document is known, so
    that a negation (`$ne`, `$nin`, `$not`, `$exists: false`) is the rest of them."""

    def __init__(self) -> None:
        self._docs: dict[str, set[str]] = {}
        self._terms_of: dict[str, list[str]] = {}
        self._of_path: dict[str, set[str]] = {}  # path -> its value terms
        self._sorted: dict[tuple[str, str], tuple[list[Any], list[str]]] = {}  # (path, kind) -> values, their terms
        self._lock = threading.Lock()
        self.version = 0  # one more at each write: a filter's ids read at one version are the same ids

    def upsert(self, doc_id: str, metadata: Mapping[str, Any] | None) -> None:
        terms = _terms(metadata)
        with self._lock:
            self._remove(doc_id)
            self._add(doc_id, terms)

    def remove(self, doc_id: str) -> None:
        with self._lock:
            self._remove(doc_id)

    def _add(self, doc_id: str, terms: list[str]) -> None:
        self.version += 1
        self._terms_of[doc_id] = terms
        for term in terms:
            if term not in self._docs:
                self._docs[term] = set()
                self._new_value(term, added=True)
            self._docs[term].add(doc_id)

    def _remove(self, doc_id: str) -> None:
        self.version += 1
        for term in self._terms_of.pop(doc_id, ()):
            ids = self._docs[term]
            ids.discard(doc_id)
            if not ids:
                del self._docs[term]
                self._new_value(term, added=False)

    def _new_value(self, term: str, *, added: bool) -> None:
        """A path gained or lost a distinct value: its sorted values are sorted again when next asked for."""
        decoded = json.loads(term)
        if len(decoded) == 2:
            path = decoded[0]
            terms = self._of_path.setdefault(path, set())
            if added:
                terms.add(term)
            else:
                terms.discard(term)
            for of_kind in ("number", "string"):
                self._sorted.pop((path, of_kind), None)

    def matching(self, where: Mapping[str, Any] | Filter, *, copy: bool = True) -> Set[str]:
        """Ids of the documents the filter selects (a request's JSON, or its parsed tree). With `copy` false, a
        single term's own list may come back as it is, not copied (half a million ids take milliseconds to copy):
        for membership tests and C-level copies, which writers cannot interleave with."""
        tree = where if isinstance(where, Condition | AllOf | AnyOf | Not) else parse(where)
        with self._lock:
            found = self._select(tree)
            return set(found) if copy else found

    def _select(self, tree: Filter) -> Set[str]:
        if isinstance(tree, AllOf):
            sets = sorted((self._select(part) for part in tree.parts), key=len)
            return set(sets[0]).intersection(*sets[1:])
        if isinstance(tree, AnyOf):
            return set().union(*(self._select(part) for part in tree.parts))
        if isinstance(tree, Not):
            return self._everyone() - self._select(tree.part)
        if tree.op == "$exists":
            present = self._docs.get(_presence(tree.path)) or NONE
            return present if tree.value else self._everyone() - present
        if tree.op in POSITIVE:
            return self._everyone() - self._select(Condition(tree.path, POSITIVE[tree.op], tree.value))
        if tree.op == "$eq":
            return self._docs.get(_term(tree.path, tree.value)) or NONE
        if tree.op == "$in":
            return set().union(*(self._docs.get(_term(tree.path, v), set()) for v in tree.value))
        return self._range(tree)

    def _range(self, tree: Condition) -> set[str]:
        """The documents with a value of the operand's kind on the right side of it, from the path's sorted values."""
        values, terms = self._sorted_values(tree.path, kind(tree.value))
        low, high = 0, len(values)
        if tree.op in ("$gt", "$gte"):
            low = (bisect.bisect_right if tree.op == "$gt" else bisect.bisect_left)(values, tree.value)
        else:
            high = (bisect.bisect_left if tree.op == "$lt" else bisect.bisect_right)(values, tree.value)
        return set().union(*(self._docs[t] for t in terms[low:high]))

    def _sorted_values(self, path: str, of_kind: str) -> tuple[list[Any], list[str]]:
        key = (path, of_kind)
        if key not in self._sorted:
            decoded = ((json.loads(term)[1], term) for term in self._of_path.get(path, ()))
            pairs = sorted((value, term) for value, term in decoded if kind(value) == of_kind)
            self._sorted[key] = ([v for v, _ in pairs], [t for _, t in pairs])
        return self._sorted[key]

    def ids(self) -> set[str]:
        """Every document's id."""
        with self._lock:
            return set(self._terms_of)

    def _everyone(self) -> set[str]:
        return set(self._terms_of)

    def state(self) -> dict[str, list[str]]:
        with self._lock:
            return {doc_id: list(terms) for doc_id, terms in self._terms_of.items()}

    @classmethod
    def from_state(cls, state: Mapping[str, list[str]]) -> FieldIndex:
        fields = cls()
        for doc_id, terms in state.items():
            fields._add(doc_id, list(terms))
        return fields
