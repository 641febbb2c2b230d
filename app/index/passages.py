"""Long documents as overlapping passages that each fit the backbone's window, cut on sentence boundaries.

A backbone reads its first `max_length` tokens and no more; a document indexed whole would be searched by
its beginning only. Each passage is encoded and indexed, and a document scores as its best passage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from app.backbones.prompts import prompted

if TYPE_CHECKING:
    from app.backbones.base import Backbone
    from app.core.config import Settings

PASSAGE_MARK = "\x1f"  # passage n > 0 of a document is indexed as f"{doc_id}\x1f{n}"; passage 0 as the id itself

Spans = list[tuple[int, int]]
CountTokens = Callable[[Sequence[str]], list[int]]  # word pieces per text, special tokens not counted

_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n\s*")
_WORD = re.compile(r"\S+")


def sentence_spans(text: str) -> Spans:
    """Character spans of sentences (a line break ends one too); whitespace between them belongs to none."""
    spans, start = [], 0
    for gap in _SENTENCE_END.finditer(text):
        if gap.start() > start:
            spans.append((start, gap.start()))
        start = gap.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def _word_pieces(text: str, span: tuple[int, int], count: CountTokens, window: int) -> Spans:
    """A sentence longer than the window, cut between words into pieces of at most `window` tokens."""
    words = [(span[0] + m.start(), span[0] + m.end()) for m in _WORD.finditer(text[span[0] : span[1]])]
    sizes = count([text[s:e] for s, e in words])
    pieces: Spans = []
    start: int | None = None
    used, prev_end = 0, 0
    for (s, e), n in zip(words, sizes, strict=True):
        if start is not None and used + n > window:
            pieces.append((start, prev_end))
            start, used = None, 0
        start = s if start is None else start
        used, prev_end = used + n, e
    if start is not None:
        pieces.append((start, prev_end))
    return pieces


def passage_spans(text: str, count: CountTokens, window: int, overlap: int, whole: int | None = None) -> Spans:
    """Spans of passages of at most `window` tokens, consecutive ones sharing whole sentences of at most
    `overlap` tokens; one span for a text of at most `whole` tokens (default `window`)."""
    units = sentence_spans(text)
    sizes = count([text[s:e] for s, e in units])
    if sum(sizes) <= (window if whole is None else whole):
        return [(0, len(text))]
    split_units, split_sizes = [], []
    for unit, n in zip(units, sizes, strict=True):
        pieces = [unit] if n <= window else _word_pieces(text, unit, count, window)
        split_units.extend(pieces)
        split_sizes.extend([n] if n <= window else count([text[s:e] for s, e in pieces]))
    passages, first = [], 0
    while first < len(split_units):
        last, used = first, split_sizes[first]
        while last + 1 < len(split_units) and used + split_sizes[last + 1] <= window:
            last += 1
            used += split_sizes[last]
        passages.append((split_units[first][0], split_units[last][1]))
        if last + 1 >= len(split_units):
            break
        nxt, shared = last + 1, 0  # step back over whole sentences while they fit the overlap
        while nxt - 1 > first and shared + split_sizes[nxt - 1] <= overlap:
            nxt -= 1
            shared += split_sizes[nxt]
        first = nxt
    return passages


class PassageSplitter:
    """A backbone's passages: a text it reads whole stays one; a longer one is split into `window`-token passages."""

    def __init__(self, token_counts: CountTokens, max_length: int, window: int, overlap: int):
        self._counts = token_counts  # the backbone's: special tokens included
        self.specials = token_counts([""])[0]
        self.max_length = max_length
        self.window = min(window, max_length - self.specials)
        self.overlap = min(overlap, self.window // 2)

    def _count(self, texts: Sequence[str]) -> list[int]:
        return [n - self.specials for n in self._counts(texts)] if texts else []

    def __call__(self, text: str) -> Spans:
        if len(text.encode()) + self.specials <= self.max_length:  # a token covers at least one byte
            return [(0, len(text))]
        return passage_spans(text, self._count, self.window, self.overlap, whole=self.max_length - self.specials)


def spans_json(spans: Spans) -> str:
    """How a record stores its passages: "" for one passage (the whole text), else JSON [[start, end], ...]."""
    return "" if len(spans) <= 1 else json.dumps([list(s) for s in spans])


def spans_fault(passages: object, length: int | None) -> str | None:
    """Why a record's passages are not spans of its text of `length` characters ("" for one passage, else JSON
    [[start, end], ...] of at least two, each 0 <= start < end <= length, starts and ends increasing), or None:
    checked where a record is written from outside (an import) and where one is read into an index (None: a length
    not known, not checked)."""
    if passages == "":
        return None
    if not isinstance(passages, str):
        return "passages: a JSON text of spans, or empty for one passage"
    try:
        spans = json.loads(passages)
    except (ValueError, RecursionError):
        return "passages: not JSON"
    pairs = isinstance(spans, list) and len(spans) >= 2
    if not pairs or not all(isinstance(p, list) and len(p) == 2 and all(type(x) is int for x in p) for p in spans):
        return "passages: a list of two or more [start, end] integer pairs (empty for one passage)"
    if not all(0 <= start < end <= (end if length is None else length) for start, end in spans):
        return f"passages: every span within the text's {length} characters, start before end"
    if any(b[0] <= a[0] or b[1] <= a[1] for a, b in zip(spans, spans[1:], strict=False)):
        return "passages: spans in order, each starting and ending after the one before"
    return None


def stored_spans(passages: str, text: str) -> Spans:
    return [(0, len(text))] if not passages else [tuple(s) for s in json.loads(passages)]


def splitter_for(backbone: Backbone, settings: Settings) -> PassageSplitter:
    """The splitter of a backbone under CE_PASSAGE_TOKENS (a fifth of it shared): one for the API, `index` and Ray."""
    tokens, prompt = settings.passage_tokens, backbone.prompts.document

    def counts(texts: Sequence[str]) -> list[int]:  # a passage is encoded after the document prompt: it counts
        return backbone.token_counts(prompted(prompt, texts))

    return PassageSplitter(counts, backbone.max_length, tokens, tokens // 5)


def passage_key(doc_id: str, n: int) -> str:
    return doc_id if n == 0 else f"{doc_id}{PASSAGE_MARK}{n}"


def passage_of(key: str) -> tuple[str, int]:
    """(document id, passage number) of an index key."""
    doc_id, mark, n = key.rpartition(PASSAGE_MARK)
    return (doc_id, int(n)) if mark else (key, 0)


def best_passages(hits: Sequence[tuple[str, float]]) -> tuple[list[tuple[str, float]], dict[str, int]]:
    """Passage hits (best first) as document hits, each scored by its best passage; and which passage that was."""
    docs: list[tuple[str, float]] = []
    best: dict[str, int] = {}
    for key, score in hits:
        doc_id, n = passage_of(key)
        if doc_id not in best:
            best[doc_id] = n
            docs.append((doc_id, score))
    return docs, best
