"""Documents: stored in Redis with their raw vectors, then put in the served index; read, listed, counted, deleted
and re-labelled, by ids or by a filter."""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from app.core.errors import InvalidInput, NotFound
from app.core.metadata_limits import metadata_fault
from app.core.stored_vectors import to_stored
from app.index.live import ServedIndex
from app.index.metadata_filter import Filter
from app.index.passages import PASSAGE_MARK, PassageSplitter, Spans, spans_json
from app.services.embedding import EmbeddingService
from app.services.on_collection import OnCollection
from app.store.documents import DocumentRecord
from app.store.redis_store import RedisStore

MAX_ID_LENGTH = 256
DELETE_BATCH = 1000  # ids deleted in one transaction (and one change-log entry)


@dataclass(frozen=True)
class DocumentInput:
    """A document to index: optional id, text, optional metadata."""

    text: str
    id: str | None = None
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    metadata: dict[str, Any]

    @classmethod
    def from_record(cls, record: DocumentRecord) -> Document:
        return cls(record.id, record.text, json.loads(record.metadata_json))


def document_id(text: str) -> str:
    """Default id: a hash of the text, so ingesting the same text twice never duplicates it."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def document_records(
    encode: Callable[[list[str]], np.ndarray], docs: Sequence[DocumentInput], split: Callable[[str], Spans]
) -> list[DocumentRecord]:
    """Ids (given, or the text's hash), a repeated id's last version, passages and their raw vectors: what the
    store keeps.

    The API, `index` and `index --engine ray` all go through here, so the same input gives the same records.
    """
    ids = [d.id if d.id is not None else document_id(d.text) for d in docs]
    for i, doc_id in enumerate(ids):
        if not doc_id or len(doc_id) > MAX_ID_LENGTH:
            raise InvalidInput(f"documents[{i}].id must have 1 to {MAX_ID_LENGTH} characters")
        if PASSAGE_MARK in doc_id:
            raise InvalidInput(f"documents[{i}].id must not contain the control character U+001F")
    last = {doc_id: i for i, doc_id in enumerate(ids)}  # a repeated id: the last one wins
    keep = sorted(last.values())
    spans = [split(docs[i].text) for i in keep]
    raw = encode([docs[i].text[s:e] for i, doc_spans in zip(keep, spans, strict=True) for s, e in doc_spans])
    bounds = np.cumsum([0, *map(len, spans)])
    records = []
    for row, i in enumerate(keep):
        vector, dtype = to_stored(raw[bounds[row] : bounds[row + 1]])
        records.append(
            DocumentRecord(
                ids[i], docs[i].text, json.dumps(docs[i].metadata or {}), vector, spans_json(spans[row]), dtype
            )
        )
    return records


class DocumentService(OnCollection):
    """Writes go to Redis first, in one transaction with their change-log entry, then to the served index."""

    def __init__(self, store: RedisStore, served: ServedIndex, embedding: EmbeddingService, split: PassageSplitter):
        super().__init__(store, served, embedding)
        self.split = split

    def add(self, docs: Sequence[DocumentInput]) -> list[str]:
        """Split long texts into passages, encode, write to Redis in one transaction, then index; a store failure
        leaves nothing behind."""
        self._embedding.check_texts([d.text for d in docs], "documents")
        self._embedding.check_tokens([d.text for d in docs], "documents", truncated=False)
        return self.put_records(document_records(self._embedding.encode_documents, docs, self.split))

    def put_records(self, records: Sequence[DocumentRecord]) -> list[str]:
        """Records with their vectors (encoded here, or imported) to Redis in one transaction, then to the index."""
        with self._served.writing() as index:
            change = self.store.documents.put(self.collection_key, records)
            self._served.wrote(index, records, change)
        return [r.id for r in records]

    def delete(self, doc_id: str) -> None:
        if not self.delete_many([doc_id]):
            raise NotFound(f"no document with id {doc_id!r}")

    def get(self, doc_id: str) -> Document:
        (record,) = self.store.documents.get(self.collection_key, [doc_id], replica_ok=True)  # answers a client
        if record is None:
            raise NotFound(f"no document with id {doc_id!r}")
        return Document.from_record(record)

    def count(self, where: Filter | None = None) -> int:
        """Stored documents; with a filter, those of the served index it selects."""
        if where is None:
            return self.store.documents.count(self.collection_key)
        return len(self._served.current.fields.matching(where))

    def page(
        self, limit: int, cursor: str | None = None, where: Filter | None = None
    ) -> tuple[list[Document], str | None]:
        """The documents after `cursor` in id order (those the filter selects), and the cursor of the next page."""
        fields = self._served.current.fields
        ordered = sorted(fields.ids() if where is None else fields.matching(where))
        start = bisect.bisect_right(ordered, cursor) if cursor is not None else 0
        chosen = ordered[start : start + limit]
        records = self.store.documents.get(self.collection_key, chosen, replica_ok=True)
        more = start + limit < len(ordered)
        return [Document.from_record(r) for r in records if r is not None], (chosen[-1] if more and chosen else None)

    def get_many(self, doc_ids: Sequence[str]) -> tuple[list[Document], list[str]]:
        """The documents of these ids in the order asked, and the ids no document has."""
        records = self.store.documents.get(self.collection_key, list(doc_ids), replica_ok=True)
        found = [Document.from_record(r) for r in records if r is not None]
        return found, [d for d, r in zip(doc_ids, records, strict=True) if r is None]

    def delete_many(self, doc_ids: Sequence[str] | None = None, where: Filter | None = None) -> int:
        """Delete these documents, or those the filter selects (chosen under the write lock): how many existed."""
        deleted = 0
        with self._served.writing() as index:
            if doc_ids is not None:
                ids = list(dict.fromkeys(doc_ids))
            elif where is not None:
                ids = sorted(index.fields.matching(where))
            else:
                raise InvalidInput("name the documents to delete: ids or a filter")
            for start in range(0, len(ids), DELETE_BATCH):
                batch = ids[start : start + DELETE_BATCH]
                existed, change = self.store.documents.delete(self.collection_key, batch)
                present = index.remove(batch)  # every passage, from both indexes
                index.local.add(change)
                deleted += max(existed, present)
        return deleted

    def update_metadata(self, updates: Mapping[str, dict[str, Any]], *, merge: bool = False) -> list[str]:
        """Replace (or merge into) stored documents' metadata, their vectors kept: nothing is encoded again. An id no
        document has is a 404 and nothing is written."""
        found = self.store.documents.get(self.collection_key, list(updates))
        missing = [d for d, r in zip(updates, found, strict=True) if r is None]
        records = [r for r in found if r is not None]
        if missing:
            raise NotFound(
                f"no document with id {missing[0]!r}" + (f" (and {len(missing) - 1} more)" if missing[1:] else "")
            )
        merged = {r.id: {**json.loads(r.metadata_json), **updates[r.id]} if merge else updates[r.id] for r in records}
        for doc_id, metadata in merged.items():  # a merge is held to the limits a whole metadata is
            if (fault := metadata_fault(metadata)) is not None:
                raise InvalidInput(f"document {doc_id!r}: merged, its {fault}; nothing was written")
        return self.put_records([replace(r, metadata_json=json.dumps(merged[r.id])) for r in records])
