"""What an import must be before any of it is written: the rules /documents keeps (text, id), every vector finite and
non-zero, passages that are spans of the text, no id twice, the end line's count right, and an existing
collection's settings (the default's too) as the import states them."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np

from app.core.errors import Conflict, InvalidInput
from app.index.passages import spans_fault
from app.services.collections.spec import SEARCH_SETTINGS, CollectionSpec
from app.store.documents import DocumentRecord

CORE = ("backbone", "pooling", "index_factory", "model_path", "shards")  # what the default collection is made of
COMPARED = (*CORE, *SEARCH_SETTINGS)


def check_lines(lines: list[dict[str, Any]], max_text_chars: int) -> None:
    """422, naming the line, for an import that breaks a rule of /documents or of the export's layout: one
    collection line (first), at most one correction, an end line only last and counting the documents sent."""
    kinds = [line["kind"] for line in lines]
    for kind in ("collection", "correction", "end"):
        if kinds.count(kind) > 1:
            raise InvalidInput(f"an import holds one {kind} line, this one {kinds.count(kind)}")
    if "end" in kinds and kinds[-1] != "end":
        raise InvalidInput(f"line {kinds.index('end') + 1}: the end line comes last")
    first: dict[str, int] = {}
    for i, line in enumerate(lines):
        if line["kind"] != "document":
            continue
        if len(line["text"]) > max_text_chars:
            raise InvalidInput(
                f"line {i + 1}: document {line['id']!r} has {len(line['text']):,} characters, at most "
                f"{max_text_chars:,} (CE_MAX_TEXT_CHARS, as on /documents)"
            )
        if (wrong := spans_fault(line["passages"], len(line["text"]))) is not None:
            raise InvalidInput(f"line {i + 1}: document {line['id']!r}: {wrong}")
        if line["id"] in first:
            raise InvalidInput(f"line {i + 1}: document {line['id']!r} again (first on line {first[line['id']] + 1})")
        first[line["id"]] = i
    if "end" in kinds and lines[-1]["documents"] != len(first):
        raise InvalidInput(f"the end line counts {lines[-1]['documents']} documents; the import holds {len(first)}")


def check_settings(header: dict[str, Any], spec: CollectionSpec, compared: tuple[str, ...] = COMPARED) -> None:
    """409 naming every setting the import states otherwise than the existing collection has it (the default
    collection: what it is made of, CORE; its search settings are the service's)."""
    held: dict[str, Any] = {
        "backbone": spec.backbone,
        "pooling": spec.pooling,
        "index_factory": spec.index_factory,
        "model_path": spec.model_path,
        "shards": spec.shards,
        **{k: spec.search.get(k) for k in SEARCH_SETTINGS},
    }
    stated = {k: header[k] for k in compared if header.get(k) is not None}
    differ = [f"{k} {stated[k]!r} (it has {held[k]!r})" for k in stated if stated[k] != held[k]]
    if differ:
        raise Conflict(f"collection {spec.name!r} exists with other settings than the import's: {'; '.join(differ)}")


def checked_record(doc: dict[str, Any], dim: int) -> DocumentRecord:
    """The stored record as exported, its vectors checked: as many as its passages, of the backbone's dim, every
    value finite and no vector zero (one could never be found by cosine)."""
    try:
        vectors = base64.b64decode(doc["vectors"], validate=True)
        rows = len(json.loads(doc["passages"])) if doc["passages"] else 1
        expected = rows * dim * np.dtype(doc["dtype"]).itemsize
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"document {doc['id']!r}: unreadable vectors or passages ({exc})") from None
    if len(vectors) != expected:
        raise InvalidInput(f"document {doc['id']!r}: {len(vectors)} bytes of {doc['dtype']} for {rows} passages")
    values = np.frombuffer(vectors, dtype=doc["dtype"]).reshape(rows, dim)
    if not np.isfinite(values).all():
        raise InvalidInput(f"document {doc['id']!r}: its vectors hold NaN or infinite values")
    if not np.any(values, axis=1).all():
        raise InvalidInput(f"document {doc['id']!r}: a vector of zeros has no direction to search by")
    return DocumentRecord(doc["id"], doc["text"], json.dumps(doc["metadata"]), vectors, doc["passages"], doc["dtype"])
