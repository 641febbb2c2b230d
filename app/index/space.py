"""A search space: a correction and the index of the documents in it, built from the store, kept current by its log."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field

import numpy as np
from tqdm.auto import tqdm

from app.correction.pipeline import Correction, Encode, corrected
from app.index.faiss_index import VectorIndex
from app.index.filters import FieldIndex
from app.store.redis_store import DocumentRecord, RedisStore, change_key

log = logging.getLogger(__name__)
REPLAY_BATCH = 1000
POOL_BATCH = 256  # texts per call when documents are encoded again for a correction that pools its own way


class ChangeLogGap(Exception):
    """The change log was trimmed past what a space has applied: replaying it would silently skip writes."""


@dataclass(eq=False)  # compared by identity: "is this still the space the snapshot holds"
class SearchSpace:
    """A correction, the index of documents corrected by it, their metadata filters, and how current they are."""

    correction: Correction | None
    index: VectorIndex
    fields: FieldIndex
    applied: str = "0-0"  # the newest change-log entry reflected here
    local: set[str] = field(default_factory=set)  # entries this process applied as it wrote them

    @property
    def correction_id(self) -> str | None:
        return self.correction.id if self.correction else None

    @property
    def search_correction(self) -> Correction | None:
        """The map documents and queries are searched in: the correction's own for search, when it has one."""
        return self.correction.search if self.correction else None

    def describe_search(self) -> dict:
        """Which space search runs in, for /info, /search and the page."""
        if self.correction is None:
            return {"shared_with_similarity": True, "method": "none", "params": {}, "correction": None,
                    "dim": self.index.dim}  # fmt: skip
        return self.correction.describe_search()

    def remove(self, doc_ids: list[str]) -> int:
        """Take documents out of the index and the filters; returns how many the index held."""
        for doc_id in doc_ids:
            self.fields.remove(doc_id)
        return self.index.remove(doc_ids)


class SpaceKeeper:
    """Builds the search spaces of one backbone's documents from the store and catches them up with its log."""

    def __init__(
        self,
        store: RedisStore,
        space_id: str,
        raw_dim: int,
        *,
        factory: str = "auto",
        recall: float = 0.95,
        encode: Encode | None = None,
    ):
        self.store = store
        self.encode = encode  # for a correction that pools its own way (SIF): documents are encoded again
        self.space_id = space_id
        self.raw_dim = raw_dim
        self.factory = factory
        self.recall = recall

    def decode(self, docs: list[DocumentRecord]) -> np.ndarray:
        raw = np.frombuffer(b"".join(d.vector for d in docs), dtype=np.float32)
        return raw.reshape(len(docs), self.raw_dim)

    def vectors(self, docs: list[DocumentRecord], correction: Correction | None, *, search: bool = True) -> np.ndarray:
        """Documents in `correction`'s search space (or its similarity space): their stored raw vectors mapped, or
        their texts pooled its way (SIF)."""
        mapped = (correction.search if search else correction) if correction else None
        return corrected(self._encode_in_batches, mapped, [d.text for d in docs], self.decode(docs))

    def _encode_in_batches(self, texts: list[str], weights: np.ndarray | None) -> np.ndarray:
        if self.encode is None:
            raise RuntimeError("this correction pools with token weights, and no encoder was given")
        raw = [self.encode(texts[i : i + POOL_BATCH], weights) for i in range(0, len(texts), POOL_BATCH)]
        return np.concatenate(raw) if raw else self.decode([])

    def build(self, correction: Correction | None, *, progress: bool = False) -> SearchSpace:
        """Every stored document's raw vector, corrected, in a new index; then the changes made meanwhile."""
        started = time.monotonic()
        applied = self.store.last_change_id(self.space_id)
        ids, chunks, fields = [], [], FieldIndex()
        total = self.store.count_documents(self.space_id)
        with tqdm(total=total, desc="index: reading store", unit="doc", disable=not progress, leave=False) as bar:
            for batch in self.store.iter_documents(self.space_id):
                ids.extend(d.id for d in batch)
                chunks.append(self.vectors(batch, correction))
                for d in batch:
                    fields.upsert(d.id, json.loads(d.metadata_json))
                bar.update(len(batch))
        dim = correction.search.dim if correction else self.raw_dim
        vectors = np.concatenate(chunks) if chunks else np.empty((0, dim), dtype=np.float32)
        if len(set(ids)) != len(ids):  # SSCAN may return an id twice while Redis rehashes the set
            first: dict[str, int] = {}
            for row, doc_id in enumerate(ids):
                first.setdefault(doc_id, row)
            ids, vectors = list(first), vectors[list(first.values())]
        index = VectorIndex.build(
            dim, ids, vectors, factory=self.factory, correction_id=correction.id if correction else None,
            recall=self.recall,
        )  # fmt: skip
        space = SearchSpace(correction, index, fields, applied)
        self.catch_up(space)
        log.info(
            "index built in %.1f s: %d documents, %s, dim %d, params %s, correction %s",
            time.monotonic() - started, len(index), index.factory, dim, index.params, space.correction_id,
        )  # fmt: skip
        return space

    def empty(self, correction: Correction | None) -> SearchSpace:
        dim = correction.search.dim if correction else self.raw_dim
        return SearchSpace(
            correction,
            VectorIndex(dim, self.factory, correction_id=correction.id if correction else None),
            FieldIndex(),
        )

    def apply(self, space: SearchSpace, records: list[DocumentRecord]) -> None:
        """Put stored documents into a space (index and filters)."""
        if not records:
            return
        space.index.upsert([r.id for r in records], self.vectors(records, space.correction))
        for r in records:
            space.fields.upsert(r.id, json.loads(r.metadata_json))

    def catch_up(self, space: SearchSpace) -> int:
        """Apply the change-log entries newer than `space.applied`; it applies the stored state, so replays are safe.

        Raises ChangeLogGap when entries it needed were trimmed: the space must then be rebuilt from the store.
        """
        applied = 0
        while True:
            changes, trimmed = self.store.changes_after(self.space_id, space.applied, REPLAY_BATCH)
            if change_key(trimmed) > change_key(space.applied):
                raise ChangeLogGap(
                    f"the change log was trimmed through {trimmed}; this index had applied {space.applied}"
                )
            if not changes:
                return applied
            for change in changes:
                if change.id in space.local:
                    space.local.discard(change.id)
                elif change.op == "delete":
                    space.remove(change.doc_ids)
                else:
                    records = self.store.get_documents(self.space_id, change.doc_ids)
                    self.apply(space, [r for r in records if r is not None])
                    space.remove([d for d, r in zip(change.doc_ids, records, strict=True) if r is None])
                space.applied = change.id
                applied += 1
