"""Readers for the files users hand to the CLI, with errors that name the line."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.services.documents import DocumentInput


class DataFileError(ValueError):
    """A missing or malformed input file; the message names the file and line."""


@dataclass(frozen=True)
class Pairs:
    """Labelled sentence pairs: two aligned lists of sentences and their gold scores."""

    left: list[str]
    right: list[str]
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.left)

    def without(self, sentences: set[str]) -> Pairs:
        """The pairs neither of whose sentences is in `sentences`: held out from a corpus trained on."""
        keep = [
            i
            for i, (a, b) in enumerate(zip(self.left, self.right, strict=True))
            if a.strip() not in sentences and b.strip() not in sentences
        ]
        return Pairs([self.left[i] for i in keep], [self.right[i] for i in keep], self.scores[keep])


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    path = Path(path)
    if not path.is_file():
        raise DataFileError(f"{path}: file not found")
    try:
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                line = line.rstrip("\n").rstrip("\r")
                if line.strip():
                    yield lineno, line
    except UnicodeDecodeError as exc:
        raise DataFileError(f"{path}: not valid UTF-8 ({exc})") from exc


def _parse_pair(path: Path, lineno: int, line: str) -> tuple[str, str, float]:
    """STS-benchmark layout (score in column 5, sentences in 6 and 7) or `sentence1<TAB>sentence2<TAB>score`."""
    cols = line.split("\t")
    if len(cols) >= 7:
        score, a, b = cols[4], cols[5], cols[6]
    elif len(cols) == 3:
        a, b, score = cols
    else:
        raise DataFileError(
            f"{path}:{lineno}: expected 3 tab-separated columns (s1, s2, score) "
            f"or the STS-benchmark layout (7+), got {len(cols)}"
        )
    try:
        value = float(score)
    except ValueError:
        raise DataFileError(f"{path}:{lineno}: score {score!r} is not a number") from None
    if not a.strip() or not b.strip():
        raise DataFileError(f"{path}:{lineno}: empty sentence")
    return a, b, value


def read_pairs(path: Path) -> Pairs:
    """Read a labelled pairs file."""
    rows = [_parse_pair(Path(path), n, line) for n, line in _lines(path)]
    if not rows:
        raise DataFileError(f"{path}: no pairs")
    a, b, s = zip(*rows, strict=True)
    return Pairs(list(a), list(b), np.array(s, dtype=np.float64))


def is_pairs_file(path: Path) -> bool:
    """A file whose first line has 3 or 7+ tab-separated columns with a numeric score is a pairs file."""
    for lineno, line in _lines(path):
        try:
            _parse_pair(Path(path), lineno, line)
            return True
        except DataFileError:
            return False
    return False


def read_corpus(path: Path) -> list[str]:
    """Sentences to fit on: one per line, or both sentences of every pair of a pairs file."""
    if is_pairs_file(path):
        pairs = read_pairs(path)
        return pairs.left + pairs.right
    sentences = [line.strip() for _, line in _lines(path)]
    if not sentences:
        raise DataFileError(f"{path}: no sentences")
    return sentences


def corpus_sha256(sentences: list[str]) -> str:
    """Content hash of a fitting corpus, recorded in the artifact."""
    digest = hashlib.sha256()
    for s in sentences:
        digest.update(s.encode())
        digest.update(b"\n")
    return digest.hexdigest()


def read_documents(path: Path) -> list[DocumentInput]:
    """Documents: JSON lines with `text` (and optional `id`, `metadata`), or one plain text per line."""
    docs = [parse_document(path, lineno, line) for lineno, line in _lines(path)]
    if not docs:
        raise DataFileError(f"{path}: no documents")
    return docs


def stream_documents(path: Path, offset: int = 0, lineno: int = 0) -> Iterator[tuple[DocumentInput, int, int]]:
    """(document, byte offset after its line, its line number) from `offset` on (line `lineno` ended there): a
    corpus of any size read a line at a time, resumable where an earlier run stopped."""
    path = Path(path)
    if not path.is_file():
        raise DataFileError(f"{path}: file not found")
    with path.open("rb") as fh:
        fh.seek(offset)
        for raw in fh:
            offset += len(raw)
            lineno += 1
            try:
                line = raw.decode("utf-8").rstrip("\n").rstrip("\r")
            except UnicodeDecodeError as exc:
                raise DataFileError(f"{path}:{lineno}: not valid UTF-8 ({exc})") from exc
            if line.strip():
                yield parse_document(path, lineno, line), offset, lineno


def parse_document(path: Path, lineno: int, line: str) -> DocumentInput:
    """One corpus line: a JSON object with `text` (and optional `id`, `metadata`), else the plain text."""
    if not line.lstrip().startswith("{"):
        return DocumentInput(text=line.strip())
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataFileError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from None
    text = obj.get("text") if isinstance(obj, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise DataFileError(f"{path}:{lineno}: a JSON line needs a non-empty string 'text'")
    doc_id, meta = obj.get("id"), obj.get("metadata")
    if doc_id is not None and not isinstance(doc_id, str | int):
        raise DataFileError(f"{path}:{lineno}: 'id' must be a string")
    if meta is not None and not isinstance(meta, dict):
        raise DataFileError(f"{path}:{lineno}: 'metadata' must be an object")
    return DocumentInput(text=text, id=None if doc_id is None else str(doc_id), metadata=meta)
