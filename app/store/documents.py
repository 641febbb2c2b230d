"""Documents in Redis: text, metadata and raw vectors per collection, each write logged with it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from redis.client import Pipeline
from redis.typing import EncodableT, FieldT

from app.store.calls import Client, KeyedStore, store_call, text
from app.store.change_log import ChangeLog
from app.store.keys import part_holding, parts_of
from app.store.transactions import Transactions

T = TypeVar("T")


@dataclass(frozen=True)
class DocumentRecord:
    """A document as stored: text, metadata as JSON text, the backbone's raw vector bytes (one vector per passage,
    end to end), its passages' character spans as JSON ("" for one passage: the whole text) and the vectors' dtype
    (core/stored_vectors; a record written before it was kept has none: float32)."""

    id: str
    text: str
    metadata_json: str
    vector: bytes
    passages: str = ""
    vector_dtype: str = "float32"


def by_part(collection_key: str, items: Sequence[T], id_of: Callable[[T], str]) -> dict[str, list[T]]:
    """`items` grouped by the part of the collection that holds each (one group unless it is partitioned; an empty
    one too, so that even an empty write is logged, as it always was)."""
    groups: dict[str, list[T]] = {} if parts_of(collection_key) != [collection_key] else {collection_key: []}
    for item in items:
        groups.setdefault(part_holding(collection_key, id_of(item)), []).append(item)
    return groups


class DocumentStore(KeyedStore):
    """A hash per document and a set of ids per collection; writes and their change-log entry in one transaction."""

    def __init__(
        self,
        client: Client,
        prefix: str,
        changes: ChangeLog,
        transactions: Transactions,
        replica: Client | None = None,
    ):
        super().__init__(client, prefix, replica)
        self._changes = changes
        self._transactions = transactions

    def _doc_key(self, collection_key: str, doc_id: str) -> str:
        return self.owned_key("doc", collection_key, doc_id)

    def _ids_key(self, collection_key: str) -> str:
        return self.owned_key("docs", collection_key)

    @store_call
    def put(self, collection_key: str, docs: Sequence[DocumentRecord]) -> str:
        """Write the documents and their change-log entry in one MULTI/EXEC per part of the collection (one part
        unless it is partitioned), each kept as the store promises (see Transactions); returns the last entry's id.
        A failure between parts leaves the earlier parts written: not acknowledged, and safe to write again."""
        entry = ""
        for part, batch in by_part(collection_key, docs, lambda d: d.id).items():

            def queue(pipe: Pipeline, part: str = part, batch: list[Any] = batch) -> None:
                for doc in batch:
                    key = self._doc_key(part, doc.id)
                    pipe.delete(key)
                    fields: dict[FieldT, EncodableT] = {
                        "text": doc.text,
                        "metadata": doc.metadata_json,
                        "vector": doc.vector,
                    }
                    fields |= {"dtype": doc.vector_dtype, **({"passages": doc.passages} if doc.passages else {})}
                    pipe.hset(key, mapping=fields)
                    pipe.sadd(self._ids_key(part), doc.id)
                self._changes.append(pipe, part, "upsert", [d.id for d in batch])

            entry = self._transactions.run(self._ids_key(part), queue)[-1].decode()
        return entry

    @store_call
    def delete(self, collection_key: str, doc_ids: Sequence[str]) -> tuple[int, str]:
        """Remove documents and log it, in one transaction per part; returns how many existed and the last entry's
        id."""
        existed, entry = 0, ""
        for part, ids in by_part(collection_key, doc_ids, str).items():

            def queue(pipe: Pipeline, part: str = part, ids: list[str] = ids) -> None:
                for doc_id in ids:
                    pipe.delete(self._doc_key(part, doc_id))
                    pipe.srem(self._ids_key(part), doc_id)
                self._changes.append(pipe, part, "delete", ids)

            results = self._transactions.run(self._ids_key(part), queue)
            existed, entry = existed + sum(int(r) for r in results[:-1:2]), results[-1].decode()
        return existed, entry

    @store_call
    def get(
        self, collection_key: str, doc_ids: Sequence[str], *, replica_ok: bool = False
    ) -> list[DocumentRecord | None]:
        """Documents in the order asked for; None where an id is unknown. `replica_ok`: from a replica while a
        primary fails over, for what answers a client (a search's hits, a document read); never for what feeds an
        index, which a replica still catching up could leave short of a document."""

        def fields(client: Client) -> list[Any]:
            pipe = client.pipeline(transaction=False)
            for doc_id in doc_ids:
                key = self._doc_key(part_holding(collection_key, doc_id), doc_id)
                pipe.hmget(key, "text", "metadata", "vector", "passages", "dtype")
            return pipe.execute()

        out: list[DocumentRecord | None] = []
        found = self.read(fields) if replica_ok else fields(self.client)
        for doc_id, (body, meta, vec, spans, dtype) in zip(doc_ids, found, strict=True):
            if body is None:
                out.append(None)
                continue
            spans = spans.decode() if spans else ""
            dtype = dtype.decode() if dtype else "float32"
            out.append(DocumentRecord(doc_id, body.decode(), meta.decode(), vec, spans, dtype))
        return out

    @store_call
    def spans(self, collection_key: str, doc_ids: Sequence[str]) -> list[str | None]:
        """Each document's passage spans as stored ("" for one passage), None where an id is unknown: what `verify`
        reads of every document, without its text or vectors."""
        pipe = self.client.pipeline(transaction=False)
        for doc_id in doc_ids:
            pipe.hmget(self._doc_key(part_holding(collection_key, doc_id), doc_id), "metadata", "passages")
        return [None if meta is None else (spans or b"").decode() for meta, spans in pipe.execute()]

    @store_call
    def count(self, collection_key: str) -> int:
        """Documents stored, every part's counted in one round trip: a hybrid search on a collection kept in parts
        reads it each time (index/dense_scale)."""

        def counts(client: Client) -> list[Any]:
            pipe = client.pipeline(transaction=False)
            for part in parts_of(collection_key):
                pipe.scard(self._ids_key(part))
            return pipe.execute()

        return sum(int(n) for n in self.read(counts))

    def scan(self, collection_key: str, batch: int = 1000) -> Iterator[list[DocumentRecord]]:
        """Every stored document, in batches (SSCAN, so a large corpus never sits in one reply)."""
        for ids in self.ids(collection_key, batch):
            yield [d for d in self.get(collection_key, ids) if d is not None]

    def ids(self, collection_key: str, batch: int = 1000) -> Iterator[list[str]]:
        """Every stored document's id, in batches, part after part (SSCAN: one may come twice while Redis rehashes)."""
        for part in parts_of(collection_key):
            cursor = 0
            while True:
                cursor, ids = self._scan_ids(part, cursor, batch)
                if ids:
                    yield ids
                if cursor == 0:
                    break

    @store_call
    def _scan_ids(self, collection_key: str, cursor: int, batch: int) -> tuple[int, list[str]]:
        cursor, ids = self.client.sscan(self._ids_key(collection_key), cursor, count=batch)
        return cursor, [text(i) for i in ids]

    @store_call
    def drop(self, collection_key: str, batch: int = 500) -> int:
        """Delete every document of a collection, a batch of ids at a time; returns how many there were."""
        dropped = 0
        for part in parts_of(collection_key):
            while ids := cast(list[bytes], self.client.spop(self._ids_key(part), batch)):  # a list, given a count
                self.client.delete(*(self._doc_key(part, text(doc_id)) for doc_id in ids))
                dropped += len(ids)
        return dropped
