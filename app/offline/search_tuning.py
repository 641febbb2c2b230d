"""The search space chosen on relevance judgments (`fit --tune-qrels`): every member of the correction family
scored by NDCG@10 and Recall@100, and a rule that keeps raw vectors unless a gain is clear and costs no recall."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from app.core.names import Method
from app.correction import CovarianceStats
from app.correction.methods import Spectrum, whitening_from_spectrum, whitening_scale
from app.correction.search_space import SearchChoice, default_search, raw_space
from app.correction.selection import ALPHAS, DROPS, EPSILONS, family
from app.offline.retrieval import JudgedCorpus, Judgments, exact_top, read_judged_corpus

RECALL_TOLERANCE = 0.002  # Recall@100 a candidate may lose on any one judged collection (0.2 points)
MIN_NDCG_GAIN = 0.001  # NDCG@10's 95% lower bound over all judged queries must reach 0.1 points
BOOTSTRAP_SAMPLES = 1000
RULE = (
    f"raw unless a candidate loses no NDCG@10 and at most {100 * RECALL_TOLERANCE:g} points of Recall@100 on any "
    f"judged collection, and its NDCG@10 gain over all judged queries has a 95% lower bound >= "
    f"{100 * MIN_NDCG_GAIN:g} points; then the best such NDCG@10"
)


@dataclass(frozen=True)
class JudgedSet:
    """A judged collection already encoded: raw document and query vectors and their judgments."""

    name: str
    collection: JudgedCorpus
    docs: np.ndarray
    queries: np.ndarray
    judgments: Judgments


@dataclass(frozen=True)
class SearchCandidate:
    """One member of the family and its NDCG@10 and Recall@100 per query, one array per judged set."""

    method: str
    params: dict[str, Any]
    dim: int
    ndcg: list[np.ndarray] = field(repr=False)
    recall: list[np.ndarray] = field(repr=False)

    @property
    def pooled_ndcg(self) -> np.ndarray:
        return np.concatenate(self.ndcg)


def read_judged(folders: Sequence[Path], encode: Callable[[list[str], str], np.ndarray]) -> list[JudgedSet]:
    """Each BEIR-layout folder read and encoded with `encode(texts, what)`."""
    out = []
    for folder in folders:
        name, collection = Path(folder).name, read_judged_corpus(folder)
        docs = encode(collection.doc_texts, f"{name} documents")
        queries = encode(collection.query_texts, f"{name} queries")
        out.append(JudgedSet(name, collection, docs, queries, Judgments.of(collection)))
    return out


def _scored(
    method: str,
    params: dict[str, Any],
    dim: int,
    sets: list[JudgedSet],
    spaces: Iterable[tuple[np.ndarray, np.ndarray]],
) -> SearchCandidate:
    """A candidate's metrics from its (queries, documents) vectors in each judged set."""
    found = [s.judgments.per_query(exact_top(q, d)) for s, (q, d) in zip(sets, spaces, strict=True)]
    return SearchCandidate(method, params, dim, [f["ndcg_at_10"] for f in found], [f["recall_at_100"] for f in found])


def score_search_candidates(spectrum: Spectrum, sets: list[JudgedSet]) -> list[SearchCandidate]:
    """Raw vectors and every member of the family (the one `auto` searches on pairs), scored on the judgments:
    in the principal basis each member only weights and keeps axes, so the basis is computed once."""
    dim = spectrum.dim
    out = [_scored(Method.NONE, {}, dim, sets, [(s.queries, s.docs) for s in sets])]
    basis = [
        ((s.queries - spectrum.mean) @ spectrum.directions, (s.docs - spectrum.mean) @ spectrum.directions)
        for s in sets
    ]
    for drop in DROPS:
        if drop >= spectrum.rank:
            continue
        for alpha in ALPHAS:
            for eps in EPSILONS:
                scale = whitening_scale(spectrum, alpha=alpha, eps=eps)
                for method, params, dims in family(alpha, eps, drop, dim - drop):
                    keep = slice(drop, drop + dims if method == Method.WHITENING else dims)
                    weights = scale[keep] if method == Method.WHITENING else 1.0
                    spaces = [(q[:, keep] * weights, d[:, keep] * weights) for q, d in basis]
                    out.append(_scored(method, params, dims, sets, spaces))
    return out


def ndcg_gain_lower_bound(candidate: SearchCandidate, raw: SearchCandidate, *, seed: int = 0) -> float:
    """One-sided 95% lower bound of the mean NDCG@10 gain over all judged queries (paired bootstrap)."""
    gain = candidate.pooled_ndcg - raw.pooled_ndcg
    picks = np.random.default_rng(seed).integers(0, len(gain), size=(BOOTSTRAP_SAMPLES, len(gain)))
    return float(np.quantile(gain[picks].mean(axis=1), 0.05))


def keeps_every_set(candidate: SearchCandidate, raw: SearchCandidate) -> bool:
    """No judged collection loses NDCG@10, nor more than RECALL_TOLERANCE of Recall@100."""
    return all(
        n.mean() >= rn.mean() and r.mean() >= rr.mean() - RECALL_TOLERANCE
        for n, rn, r, rr in zip(candidate.ndcg, raw.ndcg, candidate.recall, raw.recall, strict=True)
    )


@dataclass(frozen=True)
class SearchSelection:
    """What the judgments chose, against raw, and by how much: the provenance kept in `extra.search`."""

    chosen: SearchCandidate
    raw: SearchCandidate
    lower_bound: float
    n_candidates: int
    tuned_on: str

    def record(self) -> dict[str, Any]:
        def points(c: SearchCandidate) -> dict[str, Any]:
            return {
                "ndcg_at_10": [round(100 * n.mean(), 2) for n in c.ndcg],
                "recall_at_100": [round(100 * r.mean(), 2) for r in c.recall],
            }

        return {
            "rule": RULE,
            "tuned_on": self.tuned_on,
            "candidates": self.n_candidates,
            "ndcg_gain_lower_bound": round(100 * self.lower_bound, 2),
            "raw": points(self.raw),
            "chosen": points(self.chosen),
        }


def select_search(candidates: list[SearchCandidate], *, tuned_on: str = "") -> SearchSelection:
    """The best NDCG@10 among the candidates that keep every set (see RULE); raw unless its gain is clear."""
    raw = next(c for c in candidates if c.method == Method.NONE)
    kept = [c for c in candidates if c is not raw and keeps_every_set(c, raw)]
    if not kept:
        return SearchSelection(raw, raw, 0.0, len(candidates), tuned_on)
    best = max(kept, key=lambda c: c.pooled_ndcg.mean())
    lower = ndcg_gain_lower_bound(best, raw)
    return SearchSelection(best if lower >= MIN_NDCG_GAIN else raw, raw, lower, len(candidates), tuned_on)


def tuned_search(spectrum: Spectrum, sets: list[JudgedSet]) -> SearchChoice:
    """The search map the judgments choose, as the artifact stores it."""
    selection = select_search(score_search_candidates(spectrum, sets), tuned_on="+".join(s.name for s in sets))
    chosen = selection.chosen
    if chosen.method == Method.NONE:
        return raw_space(spectrum.dim, selection.record())
    if chosen.method == Method.WHITENING:
        mu, W = whitening_from_spectrum(spectrum, **chosen.params)
    else:  # centring or ABTT: the same rotation, the top `drop` directions left out
        drop = chosen.params.get("drop", 0)
        mu, W = spectrum.mean, spectrum.directions[:, drop:]
    return SearchChoice(chosen.method, chosen.params, mu.astype(np.float32), W.astype(np.float32), selection.record())


def choose_search(
    method: str, params: dict[str, Any], stats: CovarianceStats, raw_mean_cosine: float, judged: list[JudgedSet] | None
) -> SearchChoice:
    """The search map an artifact stores: tuned on the judgments when given, else the documented default."""
    if judged:
        return tuned_search(Spectrum.of(stats), judged)
    return default_search(method, params, stats.dim, raw_mean_cosine)
