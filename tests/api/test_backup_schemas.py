"""An import's lines as the API checks them: each line by its kind, a collection line as POST /collections takes
its settings, documents as stored."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from app.api.backup_schemas import CollectionLine, DocumentLine, EndLine, ImportBody

LINES = TypeAdapter(ImportBody)
HEADER = {
    "kind": "collection",
    "format": 1,
    "name": "t",
    "backbone": "onnx",
    "pooling": "mean",
    "fingerprint": "abc",
    "dim": 384,
    "correction": "whitening-0123456789ab",
    "fusion": "rrf",
}


def test_each_line_is_read_by_its_kind():
    doc = {"kind": "document", "id": "d1", "text": "a cat", "metadata": {"n": 1}, "vectors": "AAAA", "dtype": "float16"}
    header, document, end = LINES.validate_python([HEADER, doc, {"kind": "end", "documents": 1}])
    assert isinstance(header, CollectionLine) and header.fusion == "rrf" and header.dim == 384
    assert isinstance(document, DocumentLine) and document.metadata == {"n": 1}
    assert isinstance(end, EndLine)


@pytest.mark.parametrize(
    "line",
    [
        {**HEADER, "format": 2},
        {**HEADER, "dim": 0},
        {**HEADER, "pooling": "max"},
        {"kind": "document", "id": "a\x1fb", "text": "x"},
        {"kind": "document", "id": "d", "text": " "},
        {"kind": "document", "id": "d", "text": "x", "dtype": "int8"},
        {"kind": "unknown"},
    ],
)
def test_lines_the_server_could_not_import_are_refused(line):
    with pytest.raises(ValidationError):
        LINES.validate_python([HEADER, line] if line is not HEADER else [line])
    with pytest.raises(ValidationError):
        LINES.validate_python([])
