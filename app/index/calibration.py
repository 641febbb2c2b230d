"""How deep an approximate index searches: its knob (nprobe, efSearch), and for one that keeps codes how many
candidates are re-scored exactly, set to the smallest values that reach a recall target against exact search."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import faiss
import numpy as np

from app.index.factories import inner_index

CALIBRATION_QUERIES = 256
RECALL_MARGIN = 0.01  # calibrate a little above the target: calibration queries are documents, not new text
PROBES = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
EF_SEARCH = (16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
RERANK_DEPTHS = (50, 100, 200, 400)  # candidates a compressed index re-scores exactly, cheapest first
RERANK = "rerank"
Rows = Callable[[np.ndarray], np.ndarray]  # labels -> their exact vectors


@dataclass(frozen=True)
class SearchDepth:
    """A search depth over the calibrated one (index_probe, index_rerank: CE_SEARCH, a collection's); None: it."""

    probe: int | None = None  # nprobe (IVF) or efSearch (HNSW)
    rerank: int | None = None  # candidates re-scored exactly, for an index of compressed codes

    def over(self, index: faiss.Index, calibrated: dict[str, int]) -> dict[str, int]:
        """The calibrated parameters with these in their place."""
        knob = search_knob(index)
        params = dict(calibrated)
        if self.probe is not None and knob is not None:
            params[knob] = self.probe
        if self.rerank is not None:
            params[RERANK] = self.rerank
        return params


def search_knob(index: faiss.Index) -> str | None:
    """The parameter that trades recall for speed: nprobe (IVF), efSearch (HNSW), or none (exact)."""
    base = inner_index(index)
    return "nprobe" if isinstance(base, faiss.IndexIVF) else "efSearch" if isinstance(base, faiss.IndexHNSW) else None


def search_parameters(
    index: faiss.Index, params: dict[str, int], selector: faiss.IDSelector | None = None, *, widen: float = 1.0
) -> faiss.SearchParameters | None:
    """FAISS search parameters at the calibrated depth, `widen` times as deep (a filter letting a small share of the
    index through needs a wider probe or beam to find k of its documents; math.inf: every list, 8x the beam)."""
    base: Any = inner_index(index)  # IVF's or HNSW's own knobs, which faiss's stubs leave out
    knob = search_knob(index)
    if knob == "nprobe":
        nprobe = min(params.get("nprobe", base.nprobe), base.nlist) * widen
        return faiss.SearchParametersIVF(sel=selector, nprobe=int(min(base.nlist, math.ceil(min(nprobe, base.nlist)))))
    if knob == "efSearch":
        ef = max(params.get("efSearch", base.hnsw.efSearch), 16)
        beam: faiss.SearchParameters = faiss.SearchParametersHNSW(sel=selector, efSearch=int(ef * min(widen, 8.0)))
        return beam
    return faiss.SearchParameters(sel=selector) if selector is not None else None


def calibration_sample(vectors: np.ndarray, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels, queries, truth): sampled documents as queries and their exact top-10 among `vectors` (labels
    0..n-1), themselves left out."""
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(vectors), min(CALIBRATION_QUERIES, len(vectors)), replace=False)
    queries = np.ascontiguousarray(vectors[pick])
    _, exact = faiss.knn(queries, vectors, 11, metric=faiss.METRIC_INNER_PRODUCT)
    return pick, queries, np.array([[j for j in row if j != q][:10] for q, row in zip(pick, exact, strict=True)])


def calibrate(
    index: faiss.Index,
    queries: np.ndarray,
    truth: np.ndarray,
    recall: float,
    *,
    selves: np.ndarray | None = None,
    rows: Rows | None = None,
) -> dict[str, int]:
    """Smallest nprobe / efSearch (and, for a compressed index re-scored by `rows`, re-rank depth) whose recall@10
    against `truth` (top-10 labels per query; `selves` the queries' own labels, skipped) reaches the target
    (+ margin); {} for an exact index."""
    knob = search_knob(index)
    if knob is None or len(truth) == 0 or index.ntotal <= 11:
        return {}
    selves = np.full(len(queries), -1) if selves is None else np.asarray(selves)
    depths = RERANK_DEPTHS if rows is not None else (10,)
    values = [p for p in PROBES if p <= inner_index(index).nlist] if knob == "nprobe" else list(EF_SEARCH)
    params: dict[str, int] = {}
    for value in values:
        params = {knob: value}
        scores, labels = index.search(queries, max(depths) + 1, params=search_parameters(index, params))
        for depth in depths:
            found = [
                ranked(q, s[: depth + 1], lab[: depth + 1], rows, self_label)
                for q, s, lab, self_label in zip(queries, scores, labels, selves, strict=True)
            ]
            reached = np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth.tolist(), strict=True)])
            if reached >= recall + RECALL_MARGIN:
                return {**params, RERANK: depth} if rows is not None else params
    return {**params, RERANK: max(depths)} if rows is not None else params


def ranked(query: np.ndarray, scores: np.ndarray, labels: np.ndarray, rows: Rows | None, self_label: int) -> list[Any]:
    """The top-10 labels of one query's candidates, other than itself: re-scored exactly when `rows` is given."""
    keep = (labels >= 0) & (labels != self_label)
    labels, scores = labels[keep], scores[keep]
    if rows is not None and len(labels):
        scores = rows(labels) @ query
    return list(labels[np.argsort(-scores, kind="stable")[:10]].tolist())
