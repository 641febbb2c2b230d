"""Retrieval evaluation on a BEIR-layout collection: NDCG@10, Recall@100 and MRR@10, raw against corrected,
each change with a paired-bootstrap 95% interval over queries."""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.correction.pipeline import l2_normalize
from app.index.faiss_index import VectorIndex

METRICS = ("ndcg_at_10", "recall_at_100", "mrr_at_10")
DEPTH = 100  # ranks retrieved per query: the deepest metric's cut


@dataclass(frozen=True)
class Collection:
    """Documents (title and text joined), the judged queries, and their graded judgments."""

    doc_ids: list[str]
    doc_texts: list[str]
    query_ids: list[str]
    query_texts: list[str]
    qrels: dict[str, dict[str, int]]  # query id -> {document id: grade > 0}


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def read_collection(folder: Path) -> Collection:
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
    return Collection(
        doc_ids=[str(d["_id"]) for d in docs],
        doc_texts=[f"{d.get('title', '')} {d.get('text', '')}".strip() for d in docs],
        query_ids=[str(q["_id"]) for q in queries],
        query_texts=[q["text"] for q in queries],
        qrels={str(q["_id"]): qrels[str(q["_id"])] for q in queries},
    )


def ndcg_at(ranked: Sequence[str], judged: dict[str, int], k: int = 10) -> float:
    """Graded NDCG with linear gains and a log2(rank + 1) discount, as BEIR (pytrec_eval) computes it."""
    dcg = sum(judged.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    ideal = sum(g / math.log2(rank + 2) for rank, g in enumerate(sorted(judged.values(), reverse=True)[:k]))
    return dcg / ideal if ideal else 0.0


def recall_at(ranked: Sequence[str], judged: dict[str, int], k: int = 100) -> float:
    """Share of the relevant documents found in the first k."""
    return len(set(ranked[:k]) & judged.keys()) / len(judged) if judged else 0.0


def mrr_at(ranked: Sequence[str], judged: dict[str, int], k: int = 10) -> float:
    """1 / rank of the first relevant document within the first k, else 0."""
    return next((1.0 / (rank + 1) for rank, doc in enumerate(ranked[:k]) if doc in judged), 0.0)


def per_query(rankings: Sequence[Sequence[str]], collection: Collection) -> dict[str, np.ndarray]:
    """Each metric for each query, in the collection's query order."""
    judged = [collection.qrels[q] for q in collection.query_ids]
    return {
        "ndcg_at_10": np.array([ndcg_at(r, j) for r, j in zip(rankings, judged, strict=True)]),
        "recall_at_100": np.array([recall_at(r, j) for r, j in zip(rankings, judged, strict=True)]),
        "mrr_at_10": np.array([mrr_at(r, j) for r, j in zip(rankings, judged, strict=True)]),
    }


def paired_interval(before: np.ndarray, after: np.ndarray, *, rounds: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% interval of the mean per-query change, queries resampled with replacement (paired bootstrap)."""
    diff = np.asarray(after, dtype=np.float64) - np.asarray(before, dtype=np.float64)
    picks = np.random.default_rng(seed).integers(0, len(diff), size=(rounds, len(diff)))
    means = diff[picks].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def exact_rankings(queries: np.ndarray, docs: np.ndarray, doc_ids: Sequence[str], depth: int = DEPTH):
    """Document ids by cosine, best first, for each query (exact search)."""
    scores = l2_normalize(queries) @ l2_normalize(docs).T
    depth = min(depth, scores.shape[1])
    top = np.argpartition(-scores, depth - 1, axis=1)[:, :depth]
    order = np.take_along_axis(top, np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1), axis=1)
    return [[doc_ids[i] for i in row] for row in order]


def index_rankings(queries: np.ndarray, docs: np.ndarray, doc_ids: Sequence[str], factory: str, recall: float):
    """Document ids as the served index kind finds them (an approximate index may miss some)."""
    index = VectorIndex.build(docs.shape[1], list(doc_ids), l2_normalize(docs), factory=factory, recall=recall)
    return [[doc for doc, _ in hits] for hits in index.search(l2_normalize(queries), min(DEPTH, len(doc_ids)))]


def cached_encoding(encode: Callable[[list[str]], np.ndarray], texts: list[str], key: str, folder: Path):
    """`encode(texts)`, kept in `folder` under the hash of `key` and the texts: a second run reads it back."""
    digest = hashlib.sha256(key.encode())
    for text in texts:
        digest.update(hashlib.sha256(text.encode()).digest())
    path = Path(folder) / f"{digest.hexdigest()[:24]}.npy"
    if path.exists():
        return np.load(path)
    vectors = encode(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vectors)
    tmp.replace(path)
    return vectors


def compare(collection: Collection, raw: tuple, corrected: tuple, *, factory: str, recall: float) -> dict:
    """Raw vs corrected (each a (documents, queries) pair of vectors) on exact search and on the served index
    kind: each metric x100, and the corrected one's change as a paired-bootstrap 95% interval."""
    figures: dict = {"n_queries": len(collection.query_ids), "n_docs": len(collection.doc_ids)}
    served_index = functools.partial(index_rankings, factory=factory, recall=recall)
    for prefix, rank in (("", exact_rankings), ("index_", served_index)):
        found = {
            space: per_query(rank(queries, docs, collection.doc_ids), collection)
            for space, (docs, queries) in {"raw": raw, "corrected": corrected}.items()
        }
        for metric in METRICS:
            before, after = found["raw"][metric], found["corrected"][metric]
            low, high = paired_interval(before, after)
            figures[f"{prefix}raw_{metric}"] = round(100 * before.mean(), 2)
            figures[f"{prefix}{metric}"] = round(100 * after.mean(), 2)
            figures[f"{prefix}{metric}_change_95"] = [round(100 * low, 2), round(100 * high, 2)]
    return figures
