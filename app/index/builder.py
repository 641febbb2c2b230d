"""How a collection's search index is built from the store and kept current by the change log."""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

from tqdm.auto import tqdm

from app.correction.pipeline import Correction
from app.index.calibration import SearchDepth
from app.index.document_vectors import DocumentVectors, Encode
from app.index.faiss_index import VectorIndex
from app.index.filters import FieldIndex
from app.index.key_index import SHARDED, KeyIndex
from app.index.lexical import Analyzer, LexicalIndex
from app.index.passages import stored_spans
from app.index.search_index import SearchIndex
from app.index.shards import Shard
from app.index.streaming import ChunkedBuild
from app.store.change_log import Change, change_key
from app.store.documents import DocumentRecord
from app.store.redis_store import RedisStore

log = logging.getLogger(__name__)
REPLAY_BATCH = 1000


class ChangeLogGap(Exception):
    """The change log was trimmed past what a index has applied: replaying it would silently skip writes."""


class IndexBuilder:
    """Builds the search spaces of one backbone's documents from the store and catches them up with its log."""

    def __init__(
        self,
        store: RedisStore,
        collection_key: str,
        raw_dim: int,
        *,
        factory: str = "auto",
        recall: float = 0.95,
        depth: SearchDepth | None = None,
        encode: Encode | None = None,
        analyzer: Analyzer | None = None,
        work_dir: Path | None = None,
        shard: Shard | None = None,
        sentinel: bool = False,
    ):
        self.store = store
        self.collection_key = collection_key
        # Stored documents to vectors: their raw ones decoded, mapped into a correction's space (or encoded again)
        self.vectors = DocumentVectors(store, collection_key, raw_dim, encode=encode, keys_only=factory == SHARDED)
        self.raw_dim = raw_dim
        self.refused: set[str] = set()  # stored records no index can hold (`readable`): not counted as drift
        self.factory = factory
        self.recall = recall
        self.depth = depth or SearchDepth()
        self.analyzer = analyzer  # None: no lexical index (a writer's index)
        self.work_dir = Path(work_dir) if work_dir else Path(tempfile.gettempdir()) / "ce-lexical"
        self.shard = shard  # None: every document of the collection; else only those this shard holds
        self.sentinel = sentinel  # a shard's lexical index counts itself for BM25 across shards (index/global_bm25)

    def stored_count(self) -> int:
        """How many stored documents this index should hold: the collection's, or its shard's (a scan of ids)."""
        if self.shard is None:
            return self.store.documents.count(self.collection_key)
        return len({d for ids in self.store.documents.ids(self.collection_key) for d in self.shard.held(ids)})

    def new_lexical(self) -> LexicalIndex | None:
        """An empty lexical index in a working folder of this process's own."""
        if self.analyzer is None:
            return None
        return LexicalIndex(self.lexical_folder(), self.analyzer, sentinel=self.sentinel)

    def lexical_folder(self) -> Path:
        """A new working folder of this process's own (its lock says when the process is gone)."""
        return self.work_dir / f"{os.getpid()}-{uuid.uuid4().hex[:12]}"

    # --- building and following ----------------------------------------------------------------------------

    def build(self, correction: Correction | None, *, progress: bool = False) -> SearchIndex:
        """Every stored document's passages, corrected, in a new index, its text in a new lexical index; then the
        changes made meanwhile."""
        started = time.monotonic()
        applied = self.store.changes.last_id(self.collection_key)
        fields, passages, seen = FieldIndex(), dict[str, int](), set[str]()
        lexical = self.new_lexical()
        total = self.stored_count()
        dim = correction.search.dim if correction else self.raw_dim
        filling = self._filling(dim, total, correction.id if correction else None)
        try:
            with tqdm(total=total, desc="index: reading store", unit="doc", disable=not progress, leave=False) as bar:
                for ids in self.store.documents.ids(self.collection_key):
                    ids = [d for d in ids if d not in seen and self.holds(d)]  # SSCAN may repeat an id
                    batch = [d for d in self.readable(self.store.documents.get(self.collection_key, ids)) if d]
                    seen.update(d.id for d in batch)
                    filling.add(*self.vectors.indexed(batch, correction))
                    for d in batch:
                        fields.upsert(d.id, json.loads(d.metadata_json))
                        if d.passages:
                            passages[d.id] = len(stored_spans(d.passages, d.text))
                    if lexical is not None:
                        lexical.upsert([d.id for d in batch], [d.text for d in batch])
                    bar.update(len(batch))
            if lexical is not None:
                lexical.commit()
            dense = filling.finish(self.vectors.exact_vectors(correction, dim))
            index = SearchIndex(correction, dense, fields, applied, lexical=lexical, passages=passages)
            self.catch_up(index)
        except BaseException:
            if lexical is not None:
                lexical.close()
            raise
        log.info(
            "index built in %.1f s: %d documents (%d passages), %s, dim %d, params %s, correction %s",
            time.monotonic() - started,
            index.documents,
            len(dense),
            dense.factory,
            dim,
            dense.params,
            index.correction_id,
        )
        return index

    def _filling(self, dim: int, total: int, correction_id: str | None) -> ChunkedBuild | KeyIndex:
        """What a build fills: a FAISS index, a chunk at a time; or the keys alone, when shards hold the vectors."""
        if self.factory == SHARDED:
            return KeyIndex(dim, correction_id=correction_id, recall=self.recall)
        return ChunkedBuild(
            dim, total, factory=self.factory, correction_id=correction_id, recall=self.recall, depth=self.depth
        )

    def empty(self, correction: Correction | None) -> SearchIndex:
        dim = correction.search.dim if correction else self.raw_dim
        correction_id = correction.id if correction else None
        dense = (
            KeyIndex(dim, correction_id=correction_id, recall=self.recall)
            if self.factory == SHARDED
            else VectorIndex(dim, self.factory, correction_id=correction_id, depth=self.depth)
        )
        return SearchIndex(correction, dense, FieldIndex(), lexical=self.new_lexical())

    def apply(self, index: SearchIndex, records: Sequence[DocumentRecord], *, commit: bool = True) -> None:
        """Put stored documents into an index (both indexes and the filters); passages a new version no longer has
        leave the index."""
        if not records:
            return
        keys, vectors = self.vectors.indexed(records, index.correction)
        replaced = sum(r.id in index.dense for r in records)
        old = set(index.keys_of([r.id for r in records]))
        index.dense.upsert(keys, vectors)
        index.dense.remove(sorted(old - set(keys)))
        for r in records:
            index.fields.upsert(r.id, json.loads(r.metadata_json))
            index.passages.pop(r.id, None)
            if r.passages:
                index.passages[r.id] = len(stored_spans(r.passages, r.text))
        if index.lexical is not None:
            index.lexical.upsert([r.id for r in records], [r.text for r in records], replaced=replaced)
            if commit:
                index.lexical.commit()

    def changes(self, after: str, until: str | None = None) -> Iterator[Change]:
        """Change-log entries newer than `after` (up to `until`), oldest first, read in batches.

        Raises ChangeLogGap when entries past `after` were trimmed: what reads them must rebuild from the store.
        """
        while True:
            changes, trimmed = self.store.changes.after(self.collection_key, after, REPLAY_BATCH)
            if change_key(trimmed) > change_key(after):
                raise ChangeLogGap(f"the change log was trimmed through {trimmed}; this index had applied {after}")
            if until is not None:
                changes = [c for c in changes if change_key(c.id) <= change_key(until)]
            if not changes:
                return
            for change in changes:
                yield change
                after = change.id

    def holds(self, doc_id: str) -> bool:
        return self.shard is None or self.shard.holds(doc_id)

    def ids_in(self, change: Change) -> list[str]:
        """The ids of a change's documents that this index holds (a shard's only)."""
        return change.doc_ids if self.shard is None else self.shard.held(change.doc_ids)

    def read_records(self, change: Change) -> list[DocumentRecord | None]:
        """The stored state of the documents `touched` gives (None where gone): replays apply it, so they are safe."""
        ids = self.ids_in(change)
        return (
            [None] * len(ids)
            if change.op == "delete"
            else self.readable(self.store.documents.get(self.collection_key, ids))
        )

    def readable(self, records: list[DocumentRecord | None]) -> list[DocumentRecord | None]:
        """The records an index can hold; one it cannot (written by an older version, or by hand) is left out as if
        gone, and named in the log, so a collection opens without it rather than not at all (`verify` counts it)."""
        out: list[DocumentRecord | None] = []
        for record in records:
            if record is not None and (fault := self.vectors.fault(record)) is not None:
                log.error("document %r of %s is not indexed: %s", record.id, self.collection_key, fault)
                self.refused.add(record.id)
                record = None
            elif record is not None:
                self.refused.discard(record.id)  # written again, whole
            out.append(record)
        return out

    def catch_up(self, index: SearchIndex) -> int:
        """Apply the change-log entries newer than `index.applied` (raises ChangeLogGap, see `changes`)."""
        applied = 0
        try:
            for change in self.changes(index.applied):
                if change.id in index.local:
                    index.local.discard(change.id)
                else:
                    records = self.read_records(change)
                    self.apply(index, [r for r in records if r is not None], commit=False)
                    gone = [d for d, r in zip(self.ids_in(change), records, strict=True) if r is None]
                    index.remove(gone, commit=False)
                index.applied = change.id
                applied += 1
            return applied
        finally:
            index.commit()
