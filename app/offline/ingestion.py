"""Bulk ingestion of a corpus file: read a line at a time in batches (bounded memory), each batch written to Redis
before the checkpoint moves past it, so a killed run resumes after the last acknowledged batch; a document already
stored with the same text and metadata is never encoded again."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from app.offline.datasets import DataFileError, stream_documents
from app.services.documents import DocumentInput, DocumentService, document_id
from app.store.redis_store import RedisStore

HEAD_BYTES = 4096  # a checkpoint holds the file's first bytes' hash: another file at the same path starts over


@dataclass
class IngestionReport:
    """What one run did: documents read, encoded and written, found already stored; where it resumed."""

    source: str
    read: int = 0
    encoded: int = 0
    unchanged: int = 0  # read, but stored already with the same text and metadata: not encoded again
    resumed_at_line: int = 0  # 0: from the start
    seconds: float = 0.0

    @property
    def per_second(self) -> float:
        return self.read / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "documents_per_s": round(self.per_second, 1)}


def file_head(path: Path) -> str:
    with Path(path).open("rb") as fh:
        return hashlib.sha256(fh.read(HEAD_BYTES)).hexdigest()


class Ingestion:
    """Streams a corpus into one collection through its document service (the API's own write path)."""

    def __init__(self, store: RedisStore, documents: DocumentService):
        self.store = store
        self.documents = documents
        self.collection_key = documents.collection_key

    def resume_point(self, path: Path, source: str, restart: bool) -> tuple[int, int]:
        """(byte offset, line number) the last run acknowledged up to, for this very file; (0, 0) otherwise."""
        saved = None if restart else self.store.ingestion.get(self.collection_key, source)
        if saved is None:
            return 0, 0
        checkpoint = json.loads(saved)
        if checkpoint["head"] != file_head(path) or checkpoint["offset"] > path.stat().st_size:
            return 0, 0
        return checkpoint["offset"], checkpoint["lineno"]

    def run(self, path: Path, *, batch: int = 256, restart: bool = False, progress: bool = True) -> IngestionReport:
        """Ingest `path` from where the last run on it stopped (`restart`: from the start)."""
        path = Path(path)
        if not path.is_file():
            raise DataFileError(f"{path}: file not found")
        source, head, size = str(path.resolve()), file_head(path), path.stat().st_size
        offset, first_line = self.resume_point(path, source, restart)
        report = IngestionReport(source, resumed_at_line=first_line)
        lineno = first_line
        started = time.perf_counter()
        pending: list[DocumentInput] = []
        with tqdm(total=size, initial=offset, unit="B", unit_scale=True, desc="indexing", disable=not progress) as bar:
            for doc, end, lineno in stream_documents(path, offset, first_line):  # noqa: B007 (the last is kept)
                pending.append(doc)
                if len(pending) == batch:
                    self._write(pending, report)
                    self._checkpoint(source, end, lineno, head)
                    bar.update(end - offset)
                    offset, pending = end, []
                    bar.set_postfix(docs_per_s=f"{report.read / (time.perf_counter() - started):.0f}")
            if pending:
                self._write(pending, report)
            self._checkpoint(source, size, lineno, head)
            bar.update(size - offset)
        report.seconds = round(time.perf_counter() - started, 2)
        return report

    def _write(self, docs: list[DocumentInput], report: IngestionReport) -> None:
        """Encode and store the documents not already stored as they are; returns when Redis acknowledged them."""
        ids = [d.id if d.id is not None else document_id(d.text) for d in docs]
        stored = self.store.documents.get(self.collection_key, ids)
        fresh = [
            d
            for d, s in zip(docs, stored, strict=True)
            if s is None or s.text != d.text or json.loads(s.metadata_json) != (d.metadata or {})
        ]
        if fresh:
            self.documents.add(fresh)
        report.read += len(docs)
        report.encoded += len(fresh)
        report.unchanged += len(docs) - len(fresh)

    def _checkpoint(self, source: str, offset: int, lineno: int, head: str) -> None:
        checkpoint = {"offset": offset, "lineno": lineno, "head": head, "at": time.time()}
        self.store.ingestion.put(self.collection_key, source, json.dumps(checkpoint).encode())
