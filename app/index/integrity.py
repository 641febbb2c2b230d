"""The invariant between a collection's store and its indexes: once writes pause, Redis, the dense index and the
lexical index hold the same documents, and the dense index every passage of each. Checked in full (every id) or
cheaply (counts), so that drift is seen and repaired instead of served silently."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, field
from typing import Any

from app.index.builder import IndexBuilder
from app.index.passages import passage_of, stored_spans
from app.index.search_index import SearchIndex

FULL_CHECK_DOCUMENTS = 1_000_000  # a served index larger than this checks its counts only, unless they disagree
EXAMPLES = 10  # ids a report names per index


@dataclass(frozen=True)
class Drift:
    """How one index differs from the store: stored documents it lacks (or lacks passages of), and documents it
    holds that are not stored (or passages a document no longer has). A cheap check knows counts, not ids."""

    missing: int = 0
    extra: int = 0
    examples: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return self.missing + self.extra

    def describe(self) -> dict[str, Any]:
        return {"missing": self.missing, "extra": self.extra, "examples": list(self.examples)}


@dataclass(frozen=True)
class IntegrityCheck:
    """One comparison of the store with a collection's indexes, as of one change-log entry."""

    applied: str  # the change-log entry both sides were compared at; documents written since were left out
    stored: int
    dense: Drift
    lexical: Drift | None  # None: no lexical index (a writer's)
    full: bool  # every id compared, or only the counts
    seconds: float
    at: float = field(default_factory=time.time)

    @property
    def drift(self) -> int:
        return self.dense.count + (self.lexical.count if self.lexical else 0)

    def describe(self) -> dict[str, Any]:
        return {
            "ok": self.drift == 0,
            "full": self.full,
            "applied_change": self.applied,
            "stored": self.stored,
            "dense": self.dense.describe(),
            "lexical": self.lexical.describe() if self.lexical else None,
            "seconds": round(self.seconds, 3),
            "checked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.at)),
        }

    def summary(self) -> str:
        parts = [
            f"{name}: {d.missing} missing, {d.extra} extra (e.g. {', '.join(d.examples[:3]) or '-'})"
            for name, d in (("dense", self.dense), ("lexical", self.lexical))
            if d and d.count
        ]
        return "; ".join(parts) or "no drift"


def drift_of(expected: Mapping[str, int], held: Iterable[str], in_flight: Set[str]) -> Drift:
    """Compare an index's keys with the stored documents (id -> how many keys each should have); documents written
    after the comparison's change-log entry (`in_flight`) are left out. Pure."""
    seen: Counter[str] = Counter()
    extra: set[str] = set()
    for key in held:
        doc_id, n = passage_of(key)
        if doc_id in in_flight:
            continue
        if n >= expected.get(doc_id, 0):  # not stored, or a passage past the stored ones
            extra.add(doc_id)
        else:
            seen[doc_id] += 1
    extra.update(d for d, n in seen.items() if n > expected[d])  # one id held twice (a lexical index can)
    missing = sorted(d for d, n in expected.items() if d not in in_flight and seen[d] < n)
    return Drift(len(missing), len(extra), tuple((missing + sorted(extra))[:EXAMPLES]))


def stored_passages(builder: IndexBuilder) -> dict[str, int]:
    """Every stored document this index should hold, with its number of passages (a scan of ids and spans)."""
    store, key, out = builder.store.documents, builder.collection_key, {}
    for ids in store.ids(key):
        ids = [d for d in ids if builder.holds(d)]
        for doc_id, spans in zip(ids, store.spans(key, ids), strict=True):
            if spans is not None and doc_id not in builder.refused:  # a record no index can hold is not held
                out[doc_id] = len(stored_spans(spans, "")) if spans else 1
    return out


def check_full(builder: IndexBuilder, index: SearchIndex) -> IntegrityCheck:
    """Every id and passage of the store against both indexes. Call it with `index` caught up (its `applied`
    covering this process's own writes); writes made meanwhile are left out, so it may run beside them."""
    started, applied = time.monotonic(), index.applied
    expected = stored_passages(builder)
    dense_keys = index.dense.keys()
    lexical_ids = index.lexical.ids() if index.lexical is not None else None
    in_flight = {d for change in builder.changes(applied) for d in builder.ids_in(change)}
    lexical = None if lexical_ids is None else drift_of(dict.fromkeys(expected, 1), lexical_ids, in_flight)
    return IntegrityCheck(
        applied, len(expected), drift_of(expected, dense_keys, in_flight), lexical, True, time.monotonic() - started
    )


def check_counts(builder: IndexBuilder, index: SearchIndex) -> IntegrityCheck | None:
    """Documents counted in the store and in both indexes; None while writes are in flight (counts then differ for a
    moment by design). Call it holding the index's write lock, with `index` caught up."""
    started, changes = time.monotonic(), builder.store.changes
    if changes.last_id(builder.collection_key) != index.applied:
        return None
    stored = builder.stored_count() - len(builder.refused)
    if changes.last_id(builder.collection_key) != index.applied:
        return None
    return IntegrityCheck(
        index.applied,
        stored,
        _count_drift(index.documents, stored),
        None if index.lexical is None else _count_drift(len(index.lexical), stored),
        False,
        time.monotonic() - started,
    )


def _count_drift(held: int, stored: int) -> Drift:
    return Drift(missing=max(stored - held, 0), extra=max(held - stored, 0))
