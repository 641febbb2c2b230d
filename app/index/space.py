"""A search space: a correction, the indexes of the documents in it (FAISS over passages, BM25 over whole texts),
built from the store and kept current by its log."""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from app.correction.pipeline import Correction, Encode, corrected
from app.index.faiss_index import VectorIndex
from app.index.filters import FieldIndex
from app.index.fusion import passage_key
from app.index.lexical import Analyzer, LexicalIndex
from app.index.passages import stored_spans
from app.store.redis_store import Change, DocumentRecord, RedisStore, change_key

log = logging.getLogger(__name__)
REPLAY_BATCH = 1000
POOL_BATCH = 256  # texts per call when documents are encoded again for a correction that pools its own way


class ChangeLogGap(Exception):
    """The change log was trimmed past what a space has applied: replaying it would silently skip writes."""


@dataclass(eq=False)  # compared by identity: "is this still the space the snapshot holds"
class SearchSpace:
    """A correction, the index of documents corrected by it, their metadata filters, and how current they are."""

    correction: Correction | None
    index: VectorIndex  # one vector per passage: a document's key is its id, its passage n > 0 `passage_key(id, n)`
    fields: FieldIndex
    applied: str = "0-0"  # the newest change-log entry reflected here
    local: set[str] = field(default_factory=set)  # entries this process applied as it wrote them
    lexical: LexicalIndex | None = None  # BM25 over whole texts; None in a writer, which searches nothing
    passages: dict[str, int] = field(default_factory=dict)  # documents of more than one passage: how many

    @property
    def documents(self) -> int:
        return len(self.index) - sum(n - 1 for n in self.passages.values())

    def keys_of(self, doc_ids) -> list[str]:
        """Every passage key of these documents (what the FAISS index holds for them)."""
        return [passage_key(d, n) for d in doc_ids for n in range(self.passages.get(d, 1))]

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

    def remove(self, doc_ids: list[str], *, commit: bool = True) -> int:
        """Take documents (all their passages) out of both indexes and the filters; returns how many were here."""
        present = sum(d in self.index for d in doc_ids)
        self.index.remove(self.keys_of(doc_ids))
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
        analyzer: Analyzer | None = None,
        work_dir: Path | None = None,
    ):
        self.store = store
        self.encode = encode  # for a correction that pools its own way (SIF): documents are encoded again
        self.space_id = space_id
        self.raw_dim = raw_dim
        self.factory = factory
        self.recall = recall
        self.analyzer = analyzer  # None: no lexical index (a writer's space)
        self.work_dir = Path(work_dir) if work_dir else Path(tempfile.gettempdir()) / "ce-lexical"

    def new_lexical(self) -> LexicalIndex | None:
        """An empty lexical index in a working folder of this process's own."""
        if self.analyzer is None:
            return None
        return LexicalIndex(self.lexical_folder(), self.analyzer)

    def lexical_folder(self) -> Path:
        """A new working folder of this process's own (its lock says when the process is gone)."""
        return self.work_dir / f"{os.getpid()}-{uuid.uuid4().hex[:12]}"

    # --- vectors -----------------------------------------------------------------------------------------

    def decode(self, docs: list[DocumentRecord]) -> np.ndarray:
        """Every passage's raw vector, documents in order, passages in order within each."""
        raw = np.frombuffer(b"".join(d.vector for d in docs), dtype=np.float32)
        return raw.reshape(-1, self.raw_dim)

    def passages(self, docs: list[DocumentRecord]) -> tuple[list[str], list[str], np.ndarray]:
        """Index keys, texts and raw vectors of every passage of `docs`."""
        keys, texts = [], []
        for d in docs:
            spans = stored_spans(d.passages, d.text)
            keys.extend(passage_key(d.id, n) for n in range(len(spans)))
            texts.extend(d.text[s:e] for s, e in spans)
        raw = self.decode(docs)
        if len(raw) != len(keys):
            raise ValueError(f"{len(raw)} stored vectors for {len(keys)} passages")
        return keys, texts, raw

    def passage_vectors(
        self, docs: list[DocumentRecord], correction: Correction | None
    ) -> tuple[list[str], np.ndarray]:
        """Index keys and vectors, in `correction`'s search space, of every passage of `docs`."""
        keys, texts, raw = self.passages(docs)
        mapped = correction.search if correction else None
        return keys, corrected(self._encode_in_batches, mapped, texts, raw)

    def vectors(self, docs: list[DocumentRecord], correction: Correction | None, *, search: bool = True) -> np.ndarray:
        """Documents (their first passage) in `correction`'s search space (or its similarity space): their stored
        raw vectors mapped, or their texts pooled its way (SIF)."""
        first = [stored_spans(d.passages, d.text)[0] for d in docs]
        mapped = (correction.search if search else correction) if correction else None
        return corrected(self._encode_in_batches, mapped, [d.text[s:e] for d, (s, e) in zip(docs, first, strict=True)],
                         self.first_vectors(docs))  # fmt: skip

    def first_vectors(self, docs: list[DocumentRecord]) -> np.ndarray:
        """Each document's first passage's raw vector: one row per document."""
        rows = [np.frombuffer(d.vector, dtype=np.float32, count=self.raw_dim) for d in docs]
        return np.vstack(rows) if rows else np.empty((0, self.raw_dim), dtype=np.float32)

    def _encode_in_batches(self, texts: list[str], weights: np.ndarray | None) -> np.ndarray:
        if self.encode is None:
            raise RuntimeError("this correction pools with token weights, and no encoder was given")
        raw = [self.encode(texts[i : i + POOL_BATCH], weights) for i in range(0, len(texts), POOL_BATCH)]
        return np.concatenate(raw) if raw else np.empty((0, self.raw_dim), dtype=np.float32)

    # --- building and following ----------------------------------------------------------------------------

    def build(self, correction: Correction | None, *, progress: bool = False) -> SearchSpace:
        """Every stored document's passages, corrected, in a new index, its text in a new lexical index; then the
        changes made meanwhile."""
        started = time.monotonic()
        applied = self.store.last_change_id(self.space_id)
        keys, chunks, fields, passages, seen = [], [], FieldIndex(), {}, set()
        lexical = self.new_lexical()
        total = self.store.count_documents(self.space_id)
        try:
            with tqdm(total=total, desc="index: reading store", unit="doc", disable=not progress, leave=False) as bar:
                for batch in self.store.iter_documents(self.space_id):
                    batch = [d for d in batch if d.id not in seen]  # SSCAN may return an id twice while Redis rehashes
                    seen.update(d.id for d in batch)
                    batch_keys, vectors = self.passage_vectors(batch, correction)
                    keys.extend(batch_keys)
                    chunks.append(vectors)
                    for d in batch:
                        fields.upsert(d.id, json.loads(d.metadata_json))
                        if d.passages:
                            passages[d.id] = len(stored_spans(d.passages, d.text))
                    if lexical is not None:
                        lexical.upsert([d.id for d in batch], [d.text for d in batch])
                    bar.update(len(batch))
            if lexical is not None:
                lexical.commit()
            dim = correction.search.dim if correction else self.raw_dim
            vectors = np.concatenate(chunks) if chunks else np.empty((0, dim), dtype=np.float32)
            correction_id = correction.id if correction else None
            index = VectorIndex.build(dim, keys, vectors, factory=self.factory, correction_id=correction_id,
                                      recall=self.recall)  # fmt: skip
            space = SearchSpace(correction, index, fields, applied, lexical=lexical, passages=passages)
            self.catch_up(space)
        except BaseException:
            if lexical is not None:
                lexical.close()
            raise
        log.info(
            "index built in %.1f s: %d documents (%d passages), %s, dim %d, params %s, correction %s",
            time.monotonic() - started, space.documents, len(index), index.factory, dim, index.params,
            space.correction_id,
        )  # fmt: skip
        return space

    def empty(self, correction: Correction | None) -> SearchSpace:
        dim = correction.search.dim if correction else self.raw_dim
        index = VectorIndex(dim, self.factory, correction_id=correction.id if correction else None)
        return SearchSpace(correction, index, FieldIndex(), lexical=self.new_lexical())

    def apply(self, space: SearchSpace, records: list[DocumentRecord], *, commit: bool = True) -> None:
        """Put stored documents into a space (both indexes and the filters); passages a new version no longer has
        leave the index."""
        if not records:
            return
        keys, vectors = self.passage_vectors(records, space.correction)
        replaced = sum(r.id in space.index for r in records)
        old = set(space.keys_of([r.id for r in records]))
        space.index.upsert(keys, vectors)
        space.index.remove(sorted(old - set(keys)))
        for r in records:
            space.fields.upsert(r.id, json.loads(r.metadata_json))
            space.passages.pop(r.id, None)
            if r.passages:
                space.passages[r.id] = len(stored_spans(r.passages, r.text))
        if space.lexical is not None:
            space.lexical.upsert([r.id for r in records], [r.text for r in records], replaced=replaced)
            if commit:
                space.lexical.commit()

    def changes(self, after: str, until: str | None = None) -> Iterator[Change]:
        """Change-log entries newer than `after` (up to `until`), oldest first, read in batches.

        Raises ChangeLogGap when entries past `after` were trimmed: what reads them must rebuild from the store.
        """
        while True:
            changes, trimmed = self.store.changes_after(self.space_id, after, REPLAY_BATCH)
            if change_key(trimmed) > change_key(after):
                raise ChangeLogGap(f"the change log was trimmed through {trimmed}; this index had applied {after}")
            if until is not None:
                changes = [c for c in changes if change_key(c.id) <= change_key(until)]
            if not changes:
                return
            for change in changes:
                yield change
                after = change.id

    def stored(self, change: Change) -> list[DocumentRecord | None]:
        """The stored state of a change's documents (None where gone): replays apply it, so they are safe."""
        return [None] * len(change.doc_ids) if change.op == "delete" else self.store.get_documents(
            self.space_id, change.doc_ids)  # fmt: skip

    def catch_up(self, space: SearchSpace) -> int:
        """Apply the change-log entries newer than `space.applied` (raises ChangeLogGap, see `changes`)."""
        applied = 0
        try:
            for change in self.changes(space.applied):
                if change.id in space.local:
                    space.local.discard(change.id)
                else:
                    records = self.stored(change)
                    self.apply(space, [r for r in records if r is not None], commit=False)
                    space.remove([d for d, r in zip(change.doc_ids, records, strict=True) if r is None], commit=False)
                space.applied = change.id
                applied += 1
            return applied
        finally:
            space.commit()
