"""Exact-match metadata filters: which documents have key == value, kept beside the vector index."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping

Scalar = str | bool | int | float | None  # what a filter can match; the API's schema uses this same type


class FilterError(ValueError):
    """A filter that cannot be evaluated (a value that is a list or an object)."""


def _term(key: str, value) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 2.0 in a filter matches 2 in a document, as JSON readers would expect
    return json.dumps([key, value])


class FieldIndex:
    """Inverted lists from (key, scalar value) to document ids; list and object values are not indexed."""

    def __init__(self) -> None:
        self._docs: dict[str, set[str]] = {}
        self._terms_of: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def upsert(self, doc_id: str, metadata: Mapping | None) -> None:
        terms = [_term(k, v) for k, v in (metadata or {}).items() if isinstance(v, Scalar)]
        with self._lock:
            self._remove(doc_id)
            if terms:
                self._terms_of[doc_id] = terms
                for term in terms:
                    self._docs.setdefault(term, set()).add(doc_id)

    def remove(self, doc_id: str) -> None:
        with self._lock:
            self._remove(doc_id)

    def _remove(self, doc_id: str) -> None:
        for term in self._terms_of.pop(doc_id, ()):
            ids = self._docs[term]
            ids.discard(doc_id)
            if not ids:
                del self._docs[term]

    def matching(self, where: Mapping) -> set[str]:
        """Ids whose metadata has every key of `where` with exactly that value (1 and 1.0 match, True does not)."""
        for key, value in where.items():
            if not isinstance(value, Scalar):
                raise FilterError(f"filter on {key!r}: only strings, numbers, booleans and null can be matched")
            if isinstance(value, float) and not math.isfinite(value):
                raise FilterError(f"filter on {key!r}: {value} matches nothing; numbers must be finite")
        with self._lock:
            lists = sorted((self._docs.get(_term(k, v), set()) for k, v in where.items()), key=len)
            if not lists:
                raise FilterError("an empty filter matches nothing; leave it out to search everything")
            result = set(lists[0])
            for ids in lists[1:]:
                result &= ids
            return result

    def state(self) -> dict[str, list[str]]:
        with self._lock:
            return {doc_id: list(terms) for doc_id, terms in self._terms_of.items()}

    @classmethod
    def from_state(cls, state: Mapping[str, list[str]]) -> FieldIndex:
        fields = cls()
        for doc_id, terms in state.items():
            fields._terms_of[doc_id] = list(terms)
            for term in terms:
                fields._docs.setdefault(term, set()).add(doc_id)
        return fields
