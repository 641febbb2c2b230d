"""The lexical half of hybrid search: BM25 over documents' words, a tantivy index in a folder of this process.

tantivy (a Rust inverted index) adds and deletes documents in place, so the change log is followed write by
write like the FAISS index, where a BM25 library built on matrices would rebuild the whole index per write.
Its segment files are written once and never changed, so a snapshot is a set of hard links, taken at once.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import shutil
import threading
import time
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import tantivy

from app.core.names import LEXICAL_LANGUAGES as LANGUAGES
from app.core.search_settings import SearchSettings
from app.index.ties import decided

ID, BODY, ANALYZER = "id", "body", "words"
WRITER_HEAP = 32_000_000  # bytes the writer buffers before it flushes a segment by itself
OWNER = ".owner.lock"  # flock-ed while its process lives: a folder whose lock can be taken was abandoned
LOCKS = (".tantivy-writer.lock", ".tantivy-meta.lock", OWNER)
ABANDON_AFTER = 60.0  # seconds a working folder must have existed before another process may judge it abandoned
# A shard's index holds one document more, whose one word no text has: BM25 explains itself on it, giving the
# shard's document and token counts, which shards add up into the statistics of the whole collection.
SENTINEL_ID, SENTINEL_TEXT = "\x00statistics", "qqcestatisticssentinelqq"


@dataclass(frozen=True)
class Analyzer:
    """How texts become terms: words, lower-cased, stop words dropped and stemmed in one language."""

    language: str = "english"
    stopwords: bool = True

    def __post_init__(self) -> None:
        if self.language not in LANGUAGES:
            raise ValueError(f"lexical language must be one of {', '.join(LANGUAGES)}, got {self.language!r}")

    @classmethod
    def of(cls, search: SearchSettings) -> Analyzer:
        """The analyzer search settings name (CE_SEARCH's, or a collection's); unset ones keep the defaults."""
        return cls(search.lexical_language or "english", search.lexical_stopwords is not False)

    def build(self) -> tantivy.TextAnalyzer:
        builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        builder = builder.filter(tantivy.Filter.remove_long(40)).filter(tantivy.Filter.lowercase())
        if self.language != "none":
            if self.stopwords:
                builder = builder.filter(tantivy.Filter.stopword(self.language))
            builder = builder.filter(tantivy.Filter.stemmer(self.language))
        return builder.build()

    def describe(self) -> dict[str, Any]:
        return asdict(self)


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field(ID, stored=True, tokenizer_name="raw")  # whole ids: deleted and filtered exactly
    builder.add_text_field(BODY, stored=False, tokenizer_name=ANALYZER, index_option="freq")  # BM25 needs no positions
    return builder.build()


class LexicalIndex:
    """BM25 over one collection's documents, keyed by document id; writes are staged, then made visible by `commit`."""

    def __init__(self, folder: Path, analyzer: Analyzer, *, sentinel: bool = False):
        self.folder = Path(folder)
        self.analyzer = analyzer
        self.sentinel = sentinel  # holds the statistics sentinel (a shard's index: see global_bm25)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._owner = os.open(self.folder / OWNER, os.O_CREAT | os.O_RDWR)
        fcntl.flock(self._owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._schema = _schema()
        self._index = tantivy.Index(self._schema, path=str(self.folder))
        self._terms = analyzer.build()
        self._index.register_tokenizer(ANALYZER, self._terms)
        self._writer: tantivy.IndexWriter | None = None
        self._staged = False
        self._closed = False  # swapped out or dropped: a late writer's changes have nowhere to go, and need none
        # Versions deleted or replaced since it was built: BM25's statistics still count them until a background
        # merge drops them, so replicas with other histories score a little apart until it is rebuilt (compacted).
        self.dead = 0
        self._lock = threading.Lock()  # one writer; commits and snapshots do not interleave
        self._index.reload()
        self._searcher = self._index.searcher()
        if sentinel and not self._searcher.doc_freq(BODY, self.sentinel_term):
            self.upsert([SENTINEL_ID], [SENTINEL_TEXT])
            self.commit()

    @property
    def sentinel_term(self) -> str:
        return self._terms.analyze(SENTINEL_TEXT)[0]

    # --- writes ------------------------------------------------------------------------------------------

    def _writing(self) -> tantivy.IndexWriter:
        if self._writer is None:
            self._writer = self._index.writer(heap_size=WRITER_HEAP, num_threads=1)
        return self._writer

    def upsert(self, doc_ids: Sequence[str], texts: Sequence[str], *, replaced: int = 0) -> None:
        """Stage documents; an id already present is replaced (`replaced`: how many were, as the caller knows)."""
        with self._lock:
            if self._closed:
                return
            self.dead += replaced
            writer = self._writing()
            for doc_id, text in zip(doc_ids, texts, strict=True):
                writer.delete_documents_by_term(ID, doc_id)
                writer.add_document(tantivy.Document(id=doc_id, body=text))
            self._staged = True

    def remove(self, doc_ids: Sequence[str], *, present: int | None = None) -> None:
        """Stage deletions (an unknown id is no error; `present`: how many were here, if the caller knows)."""
        with self._lock:
            if self._closed:
                return
            self.dead += len(doc_ids) if present is None else present
            writer = self._writing()
            for doc_id in doc_ids:
                writer.delete_documents_by_term(ID, doc_id)
            self._staged = True

    def commit(self) -> None:
        """Make staged writes searchable (one commit for a whole batch: each costs a few milliseconds)."""
        with self._lock:
            if not self._staged or self._closed or self._writer is None:
                return
            self._writer.commit()
            self._staged = False
            self._index.reload()
            self._searcher = self._index.searcher()

    # --- reads ------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return int(self._searcher.num_docs) - self.sentinel

    def ids(self, page: int = 100_000) -> list[str]:
        """Every document id it holds, as of the last commit: what `verify` compares with the store."""
        searcher, out = self._searcher, list[str]()
        while len(out) < searcher.num_docs:  # the sentinel too, if it holds one: left out after
            hits = searcher.search(tantivy.Query.all_query(), page, offset=len(out)).hits
            if not hits:
                break
            out.extend(searcher.doc(address)[ID][0] for _, address in hits)
        return [doc_id for doc_id in out if doc_id != SENTINEL_ID]

    def terms(self, text: str) -> list[str]:
        return self._terms.analyze(text)

    def search(self, text: str, k: int, *, allowed: Collection[str] | None = None) -> list[tuple[str, float]]:
        """Top-k (id, BM25 score), best first; `allowed` restricts the candidates to those ids."""
        _, _, hits = self._search(text, k, allowed)
        return [(doc_id, score) for doc_id, score, _ in hits]

    def search_covered(
        self, text: str, k: int, *, allowed: Collection[str] | None = None
    ) -> tuple[list[tuple[str, float]], dict[str, float]]:
        """`search`, and the share of the query's term weight (idf) each hit holds: 1 for a document holding every
        term of the query, whatever their frequencies. One more query, scored by constant idf per term matched."""
        searcher, terms, found = self._search(text, k, allowed)
        if not found:
            return [], {}
        total = searcher.num_docs
        idf = {t: math.log(1 + (total - (n := searcher.doc_freq(BODY, t)) + 0.5) / (n + 0.5)) for t in set(terms)}
        held = [(tantivy.Occur.Should, tantivy.Query.const_score_query(self._term(t), w)) for t, w in idf.items()]
        only = self.only([d for d, _, _ in found])
        scored = searcher.search(tantivy.Query.boolean_query([*held, (tantivy.Occur.Must, only)]), len(found)).hits
        share = {(a.segment_ord, a.doc): s for s, a in scored}
        weight = sum(idf.values()) or 1.0
        coverage = {d: min(1.0, share.get((a.segment_ord, a.doc), 0.0) / weight) for d, _, a in found}
        return [(d, score) for d, score, _ in found], coverage

    def term_query(self, term: str) -> tantivy.Query:
        return self._term(term)

    def only(self, allowed: Collection[str]) -> tantivy.Query:
        """Matches the documents of `allowed` and scores nothing: a filter to add as a required clause."""
        return tantivy.Query.const_score_query(tantivy.Query.term_set_query(self._schema, ID, list(allowed)), 0.0)

    def searcher(self) -> tantivy.Searcher:
        """The searcher of the last commit: one for a whole query, so its statistics and hits agree."""
        return self._searcher

    def _term(self, term: str) -> tantivy.Query:
        return tantivy.Query.term_query(self._schema, BODY, term)

    def _search(
        self, text: str, k: int, allowed: Collection[str] | None
    ) -> tuple[tantivy.Searcher, list[str], list[tuple[str, float, Any]]]:
        """The searcher read, the query's terms, and its top-k (id, BM25, address), equal scores by id."""
        terms = self.terms(text)  # a repeated term counts again, as in any BM25 engine
        if self.sentinel:
            terms = [t for t in terms if t != self.sentinel_term]
        searcher = self._searcher
        if not terms or k < 1 or (allowed is not None and not allowed):
            return searcher, terms, []
        query = tantivy.Query.boolean_query([(tantivy.Occur.Should, self._term(term)) for term in terms])
        if allowed is not None:
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, self.only(allowed))])
        asked = k + 1  # read past k until the k-th score's run of equal scores has ended (index/ties)
        while True:
            hits = [(float(score), address) for score, address in searcher.search(query, asked).hits]
            if decided([score for score, _ in hits], k, asked):
                found = [(searcher.doc(address)[ID][0], score, address) for score, address in hits]
                return searcher, terms, sorted(found, key=lambda hit: (-hit[1], hit[0]))[:k]
            asked *= 4

    # --- files ------------------------------------------------------------------------------------------

    def size_bytes(self) -> int:
        """Bytes of its files on disk (tantivy maps them: what a search may touch)."""
        return sum(f.stat().st_size for f in self.folder.iterdir() if f.is_file())

    def link_into(self, target: Path, *, attempts: int = 3) -> None:
        """A snapshot in `target`: the last commit's files, hard-linked (no byte is copied); tried again if a
        background merge retired a file between reading the commit and linking it."""
        for attempt in range(attempts):
            try:
                return self._link_into(target)
            except FileNotFoundError:
                shutil.rmtree(target, ignore_errors=True)
                if attempt == attempts - 1:
                    raise

    def _link_into(self, target: Path) -> None:
        with self._lock:
            target.mkdir(parents=True)
            meta = json.loads((self.folder / "meta.json").read_text())
            segments = {s["segment_id"].replace("-", "") for s in meta.get("segments", [])}
            for name in os.listdir(self.folder):
                if name in LOCKS or name == "meta.json":
                    continue
                if name == ".managed.json" or name.split(".", 1)[0] in segments:
                    os.link(self.folder / name, target / name)
            (target / "meta.json").write_text(json.dumps(meta))

    @classmethod
    def from_snapshot(cls, snapshot: Path, folder: Path, analyzer: Analyzer, *, sentinel: bool = False) -> LexicalIndex:
        """A working copy of a snapshot (hard links again: the snapshot stays as it was)."""
        folder.mkdir(parents=True)
        for name in os.listdir(snapshot):
            os.link(snapshot / name, folder / name)
        return cls(folder, analyzer, sentinel=sentinel)

    def close(self) -> None:
        """Let go of the writer and delete the working folder (a snapshot keeps its own links)."""
        with self._lock:
            if self._closed:
                return
            self._writer, self._closed = None, True
        shutil.rmtree(self.folder, ignore_errors=True)
        os.close(self._owner)

    def describe(self) -> dict[str, Any]:
        return {
            "documents": len(self),
            "dead_versions": self.dead,
            "engine": f"tantivy {version('tantivy')}",
            **self.analyzer.describe(),
        }


def remove_abandoned(work_dir: Path) -> None:
    """Working folders whose process is gone (killed before it could delete its own): their owner lock is free.
    A process id is no proof: in a container every start is pid 1."""
    if not work_dir.is_dir():
        return
    for folder in work_dir.iterdir():
        if time.time() - folder.stat().st_mtime < ABANDON_AFTER:
            continue  # perhaps being made right now, before its owner could lock it
        try:
            fd = os.open(folder / OWNER, os.O_CREAT | os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a live process holds it
        finally:
            os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)
