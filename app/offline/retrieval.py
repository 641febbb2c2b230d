"""Retrieval evaluation on a BEIR-layout collection: NDCG@10, Recall@100 and MRR@10, raw against corrected,
each change with a paired-bootstrap 95% interval over queries."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from app.correction.pipeline import l2_normalize
from app.index.faiss_index import VectorIndex

METRICS = ("ndcg_at_10", "recall_at_100", "mrr_at_10", "success_at_1")  # success@1: a relevant document first
DEPTH = 100  # ranks retrieved per query: the deepest metric's cut
DISCOUNT = 1.0 / np.log2(np.arange(2, 12))  # NDCG@10's discount of ranks 1..10
QUERY_CHUNK = 256  # queries scored against every document at once


@dataclass(frozen=True)
class JudgedCorpus:
    """Documents (title and text joined), the judged queries, and their graded judgments."""

    doc_ids: list[str]
    doc_texts: list[str]
    query_ids: list[str]
    query_texts: list[str]
    qrels: dict[str, dict[str, int]]  # query id -> {document id: grade > 0}
    likes: list[str] | None = None  # "more like this" tasks: each query is the document of this id (left out)
    own: list[str] | None = None  # long queries: each query's own document, stored, never judged (BEIR's ArguAna)

    def own_document(self, row: int) -> str | None:
        """The document a query's ranking is judged without: the one it is like, or its own text's."""
        for ids in (self.likes, self.own):
            if ids is not None:
                return ids[row]
        return None


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def read_judged_corpus(folder: Path) -> JudgedCorpus:
    """`corpus.jsonl`, `queries.jsonl` and `qrels/test.tsv` of a folder; queries without a relevant document
    are left out (they have no answer to find). Ids are strings: query "5" and document "5" are unrelated."""
    folder = Path(folder)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        if not (folder / name).is_file():
            raise ValueError(f"{folder} has no {name} (BEIR layout: corpus.jsonl, queries.jsonl, qrels/test.tsv)")
    docs = _jsonl(folder / "corpus.jsonl")
    qrels: dict[str, dict[str, int]] = {}
    for n, line in enumerate((folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split("\t")
        if n == 1 and parts[0] == "query-id" or not line.strip():
            continue
        if len(parts) != 3 or not parts[2].strip().lstrip("-").isdigit():
            raise ValueError(f"{folder / 'qrels' / 'test.tsv'}:{n}: expected query-id<TAB>corpus-id<TAB>score")
        if int(parts[2]) > 0:
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    queries = [q for q in _jsonl(folder / "queries.jsonl") if str(q["_id"]) in qrels]
    return JudgedCorpus(
        doc_ids=[str(d["_id"]) for d in docs],
        doc_texts=[f"{d.get('title', '')} {d.get('text', '')}".strip() for d in docs],
        query_ids=[str(q["_id"]) for q in queries],
        query_texts=[q["text"] for q in queries],
        qrels={str(q["_id"]): qrels[str(q["_id"])] for q in queries},
    )


@dataclass(frozen=True)
class Judgments:
    """A collection's judgments as sorted (query, document) keys, so every metric of every query is one numpy
    step; each query's ideal DCG@10 and relevant count come from its qrels, documents missing from the corpus
    included (as pytrec_eval counts them)."""

    keys: np.ndarray  # query row * (n_docs + 1) + document column, sorted, then a sentinel no rank reaches
    grades: np.ndarray  # the grade of each key (0 for the sentinel)
    width: int  # n_docs + 1: column -1 (an empty rank) lands on a column no judgment has
    ideal_dcg: np.ndarray
    n_relevant: np.ndarray

    @classmethod
    def of(cls, collection: JudgedCorpus) -> Judgments:
        column = {doc: i for i, doc in enumerate(collection.doc_ids)}
        width = len(column) + 1
        pairs = {
            row * width + column[doc]: grade
            for row, query in enumerate(collection.query_ids)
            for doc, grade in collection.qrels[query].items()
            if doc in column
        }
        keys = np.array([*sorted(pairs), np.iinfo(np.int64).max], dtype=np.int64)
        judged = [sorted(collection.qrels[q].values(), reverse=True) for q in collection.query_ids]
        return cls(
            keys=keys,
            grades=np.array([*(pairs[k] for k in keys[:-1]), 0], dtype=np.float64),
            width=width,
            ideal_dcg=np.array([sum(g * d for g, d in zip(grades, DISCOUNT, strict=False)) for grades in judged]),
            n_relevant=np.array([len(grades) for grades in judged], dtype=np.float64),
        )

    def gains(self, top: np.ndarray) -> np.ndarray:
        """The grade of each ranked document column in `top` (queries x ranks; -1: nothing ranked there)."""
        wanted = np.arange(len(top))[:, None] * self.width + top
        at = np.searchsorted(self.keys, wanted)  # never past the sentinel
        return np.where(self.keys[at] == wanted, self.grades[at], 0.0)

    def per_query(self, top: np.ndarray) -> dict[str, np.ndarray]:
        """NDCG@10 (linear gains, log2 discount, as BEIR computes it), Recall@100, MRR@10 and success@1 (whether a
        relevant document came first: what known-item queries ask) of each query."""
        gains = self.gains(np.asarray(top))
        first10 = gains[:, :10] > 0
        return {
            "ndcg_at_10": (gains[:, :10] * DISCOUNT[: gains[:, :10].shape[1]]).sum(axis=1) / self.ideal_dcg,
            "recall_at_100": (gains[:, :DEPTH] > 0).sum(axis=1) / self.n_relevant,
            "mrr_at_10": np.where(first10.any(axis=1), 1.0 / (first10.argmax(axis=1) + 1), 0.0),
            "success_at_1": first10[:, 0].astype(np.float64),
        }


def paired_interval(before: np.ndarray, after: np.ndarray, *, rounds: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% interval of the mean per-query change, queries resampled with replacement (paired bootstrap)."""
    diff = np.asarray(after, dtype=np.float64) - np.asarray(before, dtype=np.float64)
    picks = np.random.default_rng(seed).integers(0, len(diff), size=(rounds, len(diff)))
    means = diff[picks].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def exact_top(queries: np.ndarray, docs: np.ndarray, depth: int = DEPTH) -> np.ndarray:
    """The document columns by cosine, best first, for each query (exact search): (n_queries, depth)."""
    docs = l2_normalize(docs)
    depth = min(depth, len(docs))
    out = np.empty((len(queries), depth), dtype=np.int64)
    for start in range(0, len(queries), QUERY_CHUNK):
        scores = l2_normalize(queries[start : start + QUERY_CHUNK]) @ docs.T
        top = np.argpartition(-scores, depth - 1, axis=1)[:, :depth]
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1, kind="stable")
        out[start : start + len(scores)] = np.take_along_axis(top, order, axis=1)
    return out


def index_top(queries: np.ndarray, docs: np.ndarray, *, factory: str, recall: float) -> np.ndarray:
    """The document columns as the served index kind finds them (-1 where an approximate index found fewer)."""
    ids = [str(i) for i in range(len(docs))]
    index = VectorIndex.build(docs.shape[1], ids, l2_normalize(docs), factory=factory, recall=recall)
    found = index.search(l2_normalize(queries), min(DEPTH, len(docs)))
    out = np.full((len(queries), min(DEPTH, len(docs))), -1, dtype=np.int64)
    for row, hits in enumerate(found):
        out[row, : len(hits)] = [int(doc) for doc, _ in hits]
    return out


def cached_encoding(encode: Callable[[list[str]], np.ndarray], texts: list[str], key: str, folder: Path) -> np.ndarray:
    """`encode(texts)`, kept in `folder` under the hash of `key` and the texts: a second run reads it back."""
    digest = hashlib.sha256(key.encode())
    for text in texts:
        digest.update(hashlib.sha256(text.encode()).digest())
    path = Path(folder) / f"{digest.hexdigest()[:24]}.npy"
    if path.exists():
        stored: np.ndarray = np.load(path)
        return stored
    vectors = encode(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vectors)
    tmp.replace(path)
    return vectors


def compare(
    judgments: Judgments, raw: tuple[Any, ...], corrected: tuple[Any, ...], *, factory: str, recall: float
) -> dict[str, Any]:
    """Raw vs corrected (each a (documents, queries) pair of vectors) on exact search and on the served index
    kind: each metric x100, and the corrected one's change as a paired-bootstrap 95% interval."""
    figures: dict[str, Any] = {"n_queries": len(judgments.ideal_dcg), "n_docs": judgments.width - 1}
    served_index = functools.partial(index_top, factory=factory, recall=recall)
    for prefix, rank in (("", exact_top), ("index_", served_index)):
        found = {
            space: judgments.per_query(rank(queries, docs))
            for space, (docs, queries) in {"raw": raw, "corrected": corrected}.items()
        }
        for metric in METRICS:
            before, after = found["raw"][metric], found["corrected"][metric]
            low, high = paired_interval(before, after)
            figures[f"{prefix}raw_{metric}"] = round(100 * before.mean(), 2)
            figures[f"{prefix}{metric}"] = round(100 * after.mean(), 2)
            figures[f"{prefix}{metric}_change_95"] = [round(100 * low, 2), round(100 * high, 2)]
    return figures
