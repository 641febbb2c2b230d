"""A collection as lines of JSON and back: its settings, its correction, its documents with their raw vectors;
imported without encoding when the backbone is the same (by fingerprint), resumed by skipping what is stored."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from app.core.errors import InvalidInput, NotReady, ServiceError
from app.correction.artifact import ArtifactFormatError, CorrectionArtifact
from app.services.collections.collection import Collection
from app.services.collections.import_checks import CORE, check_lines, check_settings, checked_record
from app.services.collections.manager import OPEN_WAIT, Collections
from app.services.collections.spec import DEFAULT, SEARCH_SETTINGS, CollectionSpec
from app.services.documents import DocumentInput, DocumentService

log = logging.getLogger(__name__)
FORMAT = 1


def export_lines(collection: Collection) -> Iterator[bytes]:
    """The header, the correction it serves (if any), every stored document, and an end line that counts them."""
    spec, services = collection.spec, collection.services
    correction = services.served.current.correction
    header = {
        "kind": "collection",
        "format": FORMAT,
        "name": spec.name,
        "backbone": spec.backbone,
        "pooling": spec.pooling,
        "model_path": spec.model_path,
        "index_factory": spec.index_factory,
        "shards": spec.shards,
        **spec.search,
        "correction": correction.id if correction else None,
        "fingerprint": collection.engine.backbone.fingerprint,
        "dim": collection.engine.backbone.dim,
    }
    yield _line(header)
    if correction is not None:
        yield _line({"kind": "correction", "artifact": base64.b64encode(correction.artifact.to_bytes()).decode()})
    count = 0
    store, key = services.documents.store, services.documents.collection_key
    for batch in store.documents.scan(key):
        for record in batch:
            count += 1
            yield _line(
                {
                    "kind": "document",
                    "id": record.id,
                    "text": record.text,
                    "metadata": json.loads(record.metadata_json),
                    "passages": record.passages,
                    "dtype": record.vector_dtype,
                    "vectors": base64.b64encode(record.vector).decode(),
                }
            )
    yield _line({"kind": "end", "documents": count})


def _line(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode() + b"\n"


@dataclass
class ImportReport:
    """What one import request did: documents written from their vectors, written after encoding, or skipped as
    already stored (a resumed import)."""

    collection: str
    from_vectors: int = 0
    encoded: int = 0
    skipped: int = 0
    created: bool = False
    correction: str | None = None


def import_lines(collections: Collections, name: str, lines: list[dict[str, Any]]) -> ImportReport:
    """Create the collection as exported if it is new, serve the exported correction where the backbone is the
    same, then write the documents not yet stored as they are. Everything is checked before anything is written,
    and a collection this import created is removed again if its documents are refused."""
    header, artifact, documents = _parsed(lines)
    check_lines(lines, collections.settings.max_text_chars)
    report = ImportReport(name)
    held = collections.specs.get(name) if name != DEFAULT else None
    if name == DEFAULT:
        check_settings(header, collections.default.spec, CORE)
    elif held is not None:
        check_settings(header, CollectionSpec.from_bytes(held))
    else:
        search = {k: header[k] for k in SEARCH_SETTINGS if header.get(k) is not None}
        collections.create(
            name,
            backbone=header["backbone"],
            pooling=header["pooling"],
            index_factory=header.get("index_factory"),
            model_path=header.get("model_path"),
            shards=header.get("shards", 0),
            search=search,
            wait=OPEN_WAIT,
        )
        report.created = True
    try:
        _import_into(collections, name, header, artifact, documents, report)
    except Exception as exc:
        if report.created and not isinstance(exc, NotReady):  # refused: nothing left (still opening: sent again)
            with suppress(ServiceError):
                collections.delete(name)
        raise
    log.info(
        "import into %s: %d from their vectors, %d encoded, %d already stored",
        name,
        report.from_vectors,
        report.encoded,
        report.skipped,
    )
    return report


def _import_into(
    collections: Collections,
    name: str,
    header: dict[str, Any],
    artifact: CorrectionArtifact | None,
    documents: list[dict[str, Any]],
    report: ImportReport,
) -> None:
    collection = collections.get(name, wait=OPEN_WAIT)
    same_backbone = header["fingerprint"] == collection.engine.backbone.fingerprint
    records = [checked_record(d, header["dim"]) for d in documents] if same_backbone else []  # checked before any write
    serving = collection.services.served.current.correction
    if same_backbone and artifact is not None and name != DEFAULT and (serving is None or serving.id != artifact.id):
        collections.publish(name, artifact).result()
    report.correction = collection.services.served.current.correction_id
    with collection.using() as services:
        fresh = _not_stored(services.documents, documents)
        report.skipped = len(documents) - len(fresh)
        if fresh and same_backbone:
            fresh_ids = {d["id"] for d in fresh}
            services.documents.put_records([r for r in records if r.id in fresh_ids])
            report.from_vectors = len(fresh)
        elif fresh:
            services.documents.add([DocumentInput(d["text"], d["id"], d["metadata"]) for d in fresh])
            report.encoded = len(fresh)


def _parsed(lines: list[dict[str, Any]]) -> tuple[dict[str, Any], CorrectionArtifact | None, list[dict[str, Any]]]:
    """The collection line, the correction, the documents: lines as the API checked them (app/api/backup_schemas)."""
    artifact = None
    for i, line in enumerate(lines):
        if line["kind"] == "correction":
            artifact = _artifact(line, i)
    return lines[0], artifact, [line for line in lines if line["kind"] == "document"]


def _artifact(line: dict[str, Any], i: int) -> CorrectionArtifact:
    try:
        return CorrectionArtifact.from_bytes(base64.b64decode(line["artifact"], validate=True))
    except (ValueError, ArtifactFormatError) as exc:
        raise InvalidInput(f"line {i + 1}: not a correction artifact ({exc})") from None


def _not_stored(documents_service: DocumentService, documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Those whose id is not stored with the same text and metadata: what an interrupted import still has to do."""
    if not documents:
        return []
    stored = documents_service.store.documents.get(documents_service.collection_key, [d["id"] for d in documents])
    return [
        d
        for d, s in zip(documents, stored, strict=True)
        if s is None or s.text != d["text"] or json.loads(s.metadata_json) != d["metadata"]
    ]
