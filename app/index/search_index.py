"""A collection's search index: its correction, the FAISS index over passages, BM25 over whole texts and the
metadata filters, with how far along the change log they are."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.correction.pipeline import Correction
from app.index.dense_scale import DenseScale
from app.index.faiss_index import VectorIndex
from app.index.filters import FieldIndex
from app.index.key_index import KeyIndex
from app.index.lexical import LexicalIndex
from app.index.passages import best_passages, passage_key, passage_of
from app.index.rerank import ExactVectors
from app.index.ties import cut


@dataclass(eq=False)  # compared by identity: "is this still the index the snapshot holds"
class SearchIndex:
    """A correction, the index of documents corrected by it, their metadata filters, and how current they are."""

    correction: Correction | None
    dense: (
        VectorIndex | KeyIndex
    )  # one vector per passage: a document's key is its id, its passage n > 0 `passage_key(id, n)`
    fields: FieldIndex
    applied: str = "0-0"  # the newest change-log entry reflected here
    local: set[str] = field(default_factory=set)  # entries this process applied as it wrote them
    lexical: LexicalIndex | None = None  # BM25 over whole texts; None in a writer, which searches nothing
    passages: dict[str, int] = field(default_factory=dict)  # documents of more than one passage: how many
    dense_scale: DenseScale | None = None  # the collection's range of cosines, measured at its first hybrid search

    @property
    def state(self) -> str:
        """The newest change reflected here, this process's own writes included: what a search was ranked at."""
        return max([self.applied, *self.local], key=lambda entry: tuple(int(part) for part in entry.split("-")))

    @property
    def documents(self) -> int:
        return len(self.dense) - sum(n - 1 for n in self.passages.values())

    def keys_of(self, doc_ids: Iterable[str]) -> list[str]:
        """Every passage key of these documents (what the FAISS index holds for them)."""
        return [passage_key(d, n) for d in tuple(doc_ids) for n in range(self.passages.get(d, 1))]

    @property
    def correction_id(self) -> str | None:
        return self.correction.id if self.correction else None

    @property
    def search_correction(self) -> Correction | None:
        """The map documents and queries are searched in: the correction's own for search, when it has one."""
        return self.correction.search if self.correction else None

    def describe_search(self) -> dict[str, Any]:
        """Which space search runs in, for /info, /search and the page."""
        if self.correction is None:
            return {
                "shared_with_similarity": True,
                "method": "none",
                "params": {},
                "correction": None,
                "dim": self.dense.dim,
            }
        return self.correction.describe_search()

    def remove(self, doc_ids: list[str], *, commit: bool = True) -> int:
        """Take documents (all their passages) out of both indexes and the filters; returns how many were here."""
        present = sum(d in self.dense for d in doc_ids)
        self.dense.remove(self.keys_of(doc_ids))
        for doc_id in doc_ids:
            self.fields.remove(doc_id)
            self.passages.pop(doc_id, None)
        if self.lexical is not None:
            self.lexical.remove(doc_ids, present=present)
            if commit:
                self.lexical.commit()
        return present

    def commit(self) -> None:
        """Make staged lexical writes searchable."""
        if self.lexical is not None:
            self.lexical.commit()

    def close(self) -> None:
        """Let go of what lives outside memory (the lexical index's working folder)."""
        if self.lexical is not None:
            self.lexical.close()


class PassageKeys:
    """The passage keys of some documents, as the dense index asks for them: a membership test and a count that
    need no list of them all (a filter letting half a million documents through), the list when iterated."""

    def __init__(self, doc_ids: Collection[str], index: SearchIndex):
        self.doc_ids, self.index = doc_ids, index
        self.key = ("passages", key) if (key := getattr(doc_ids, "key", None)) is not None else None

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and passage_of(key)[0] in self.doc_ids

    def __len__(self) -> int:
        return len(self.doc_ids)  # documents, not passages: what a share of the index is judged by

    def __iter__(self) -> Iterator[str]:
        return iter(self.index.keys_of(self.doc_ids))


def dense_hits(
    index: SearchIndex,
    vector: np.ndarray,
    depth: int,
    allowed: Collection[str] | None,
    exact: ExactVectors | None = None,
) -> tuple[list[tuple[str, float]], dict[str, int]]:
    """The top `depth` documents by their best passage's cosine (equal ones by id), and which passage that was;
    passages are searched deeper until the depth-th document's score is settled or the index has no more."""
    keys = PassageKeys(allowed, index) if allowed is not None and index.passages else allowed
    size, want = len(index.dense), depth + 1
    while True:
        (hits,) = index.dense.search(vector, want, allowed=keys, exact=exact)
        docs, best = best_passages(hits)
        exhausted = len(hits) < want or want >= size
        if exhausted or (len(docs) > depth and hits[-1][1] < docs[depth - 1][1]):
            return cut(docs, depth), best
        want = min(want * 4, size)
