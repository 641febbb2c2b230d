"""Documents: stored in Redis with their raw vectors, then put in the served index; read and deleted by id."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from app.core.errors import InvalidInput, NotFound
from app.core.stored_vectors import to_stored
from app.index.live import ServedIndex
from app.index.passages import PASSAGE_MARK, PassageSplitter, Spans, spans_json
from app.services.embedding import EmbeddingService
from app.services.on_collection import OnCollection
from app.store.documents import DocumentRecord
from app.store.redis_store import RedisStore

MAX_ID_LENGTH = 256


@dataclass(frozen=True)
class DocumentInput:
    """A document to index: optional id, text, optional metadata."""

    text: str
    id: str | None = None
    metadata: dict | None = None


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    metadata: dict

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
        return self.put_records(document_records(self._embedding.encode_raw, docs, self.split))

    def put_records(self, records: Sequence[DocumentRecord]) -> list[str]:
        """Records with their vectors (encoded here, or imported) to Redis in one transaction, then to the index."""
        with self._served.writing() as index:
            change = self.store.documents.put(self.collection_key, records)
            self._served.wrote(index, records, change)
        return [r.id for r in records]

    def delete(self, doc_id: str) -> None:
        with self._served.writing() as index:
            existed, change = self.store.documents.delete(self.collection_key, [doc_id])
            present = index.remove([doc_id])  # every passage, from both indexes
            index.local.add(change)
        if not existed and not present:
            raise NotFound(f"no document with id {doc_id!r}")

    def get(self, doc_id: str) -> Document:
        (record,) = self.store.documents.get(self.collection_key, [doc_id], replica_ok=True)  # answers a client
        if record is None:
            raise NotFound(f"no document with id {doc_id!r}")
        return Document.from_record(record)

    def count(self) -> int:
        return self.store.documents.count(self.collection_key)
