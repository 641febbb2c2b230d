"""One ranked list from two: min-max scaled scores weighed by what each list has to say for the query, a plain
convex combination of them, or reciprocal-rank fusion; and a document's dense score from its passages' (max-sim).
Pure: lists in, lists out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from app.core.names import Fusion, SearchMode

MODES = tuple(SearchMode)
FUSIONS = tuple(Fusion)
RRF_K = 60  # the usual constant of reciprocal-rank fusion (Cormack et al. 2009)
CANDIDATES = 300  # each list's depth before fusing: deep lists keep Recall@100 (measured on the dev collections)
MAX_CANDIDATES, MAX_RRF_K = 2000, 10_000  # what a request may ask
MAX_FEEDBACK_DOCS, MAX_FEEDBACK_WEIGHT = 20, 10.0

Hits = Sequence[tuple[str, float]]

# Without judgments: hybrid, calibrated at 0.7 (docs/search.md, "Choosing the default fusion": chosen on the five
# dev collections and on known-item queries built from them). A plain convex combination at 0.4 ranked the document
# holding the identifier typed first for 37 and 26 of 100 queries on CACM and CISI, as it stretched a dense list
# with nothing to say over [0, 1]; calibrated, for 98 and 100.
DEFAULT_FUSION = "calibrated"
DEFAULT_WEIGHTS = {"calibrated": 0.7, "convex": 0.4, "rrf": 0.4}  # each fusion's best lexical weight without judgments
DEFAULT_WEIGHT = DEFAULT_WEIGHTS[DEFAULT_FUSION]
DEFAULT_RULE = (
    f"no judgments: hybrid, {DEFAULT_FUSION} fusion (min-max scaled scores, each list weighed by what it has to say "
    f"for the query), lexical weight {DEFAULT_WEIGHT}, over each list's top {CANDIDATES}"
)
# A search like a stored document feeds back from its first 3 results at weight 1 unless asked otherwise: on the "more
# like this" tasks of the five dev collections it lifts MED, CISI and CACM by 1-2 NDCG@10 and loses on none beyond
# noise, where on short queries it loses 1.9 on CISI (docs/search.md, "Feedback"); so text queries keep it off.
LIKE_FEEDBACK = (3, 1.0)
LIKE_RULE = f"like a document: feedback from its first {LIKE_FEEDBACK[0]} results, weight {LIKE_FEEDBACK[1]}"
COVERAGE_SHARE = 0.5  # calibrated: a lexical candidate's score is this much its query-term coverage, the rest BM25's


@dataclass(frozen=True)
class Ranking:
    """How a search ranks: the mode and, in hybrid mode, the fusion and the lexical list's weight (unset: the
    fusion's own default, DEFAULT_WEIGHTS)."""

    mode: str = "hybrid"
    fusion: str = DEFAULT_FUSION
    lexical_weight: float | None = None
    chosen_by: str = DEFAULT_RULE
    rrf_k: int = RRF_K
    candidates: int = CANDIDATES  # each list's depth before fusing
    feedback_docs: int = 0  # pseudo-relevance feedback: the query moves toward this many first results (0: off)
    feedback_weight: float = 1.0  # ... by this much of their mean vector

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}, got {self.fusion!r}")
        if self.lexical_weight is None:
            object.__setattr__(self, "lexical_weight", DEFAULT_WEIGHTS[self.fusion])
        if not 0.0 <= self.weight <= 1.0:
            raise ValueError(f"lexical_weight must be within [0, 1], got {self.lexical_weight}")
        if not 1 <= self.rrf_k <= MAX_RRF_K:
            raise ValueError(f"rrf_k must be within [1, {MAX_RRF_K}], got {self.rrf_k}")
        if not 1 <= self.candidates <= MAX_CANDIDATES:
            raise ValueError(f"candidates must be within [1, {MAX_CANDIDATES}], got {self.candidates}")
        if not 0 <= self.feedback_docs <= MAX_FEEDBACK_DOCS:
            raise ValueError(f"feedback docs must be within [0, {MAX_FEEDBACK_DOCS}], got {self.feedback_docs}")
        if not 0 < self.feedback_weight <= MAX_FEEDBACK_WEIGHT:
            raise ValueError(f"feedback weight must be within (0, {MAX_FEEDBACK_WEIGHT}], got {self.feedback_weight}")

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Ranking:
        """A ranking recorded by another version (an artifact's, a tune's): the fields this one knows."""
        return cls(**{f.name: record[f.name] for f in fields(cls) if f.name in record})

    @property
    def weight(self) -> float:
        """The lexical list's weight: the one given, else the fusion's own default (set at creation)."""
        return DEFAULT_WEIGHTS[self.fusion] if self.lexical_weight is None else self.lexical_weight

    def describe(self) -> dict[str, Any]:
        fused = self.mode == "hybrid"
        return {
            "mode": self.mode,
            "fusion": self.fusion if fused else None,
            "lexical_weight": self.lexical_weight if fused else None,
            "chosen_by": self.chosen_by,
            "rrf_k": self.rrf_k if fused and self.fusion == "rrf" else None,
            "candidates": self.candidates,
            "feedback": self.feedback,
        }

    @property
    def feedback(self) -> dict[str, Any] | None:
        """Pseudo-relevance feedback as a request states it; None when off (or in lexical mode: no query vector)."""
        if not self.feedback_docs or self.mode == "lexical":
            return None
        return {"docs": self.feedback_docs, "weight": self.feedback_weight}

    def feedback_from(self, hits: Hits) -> list[str]:
        """The documents feedback moves the query toward: the first `feedback_docs` of `hits` (fused, or dense)."""
        return [doc_id for doc_id, _ in hits[: self.feedback_docs]]


def confidence(best: float, low: float, high: float) -> float:
    """How far a best cosine stands in a collection's range: 0 no higher than unrelated documents' (`low`), 1 at
    near duplicates' (`high`) and above; 1 where the range is empty (no judgement)."""
    spread = high - low
    return float(np.clip((best - low) / spread, 0.0, 1.0)) if spread > 1e-6 else 1.0


@dataclass(frozen=True)
class Candidates:
    """What a query's two lists say, as fusion needs it: each list best first; how far the best cosine stands in the
    collection's own range of cosines (`confidence` of the first cosine in `dense_range`, the range when measured);
    and the share of the query's term weight (idf) each lexical candidate holds."""

    dense: Hits = ()
    lexical: Hits = ()
    dense_confidence: float = 1.0
    coverage: Mapping[str, float] = field(default_factory=dict)
    dense_range: tuple[float, float] | None = None  # the collection's cosines of unrelated and of nearest documents

    @property
    def lexical_confidence(self) -> float:
        """How completely the best lexical match holds the query's terms (1: every one)."""
        return max(self.coverage.values(), default=1.0 if self.lexical else 0.0)

    def without(self, doc_id: str) -> Candidates:
        """The lists as if `doc_id` were not stored: out of both lists and of the coverage, and the dense confidence
        read from the next cosine (where the range is known)."""
        dense = [hit for hit in self.dense if hit[0] != doc_id]
        read = self.dense_confidence
        if self.dense_range is not None and dense:
            read = confidence(dense[0][1], *self.dense_range)
        return replace(
            self,
            dense=dense,
            lexical=[hit for hit in self.lexical if hit[0] != doc_id],
            coverage={d: c for d, c in self.coverage.items() if d != doc_id},
            dense_confidence=read,
        )

    def near_copy(self) -> str | None:
        """The document both lists put first with a cosine as close as near duplicates' (a copy of the query, as a
        long query's own text is): it says it matches, and nothing of how the other documents do."""
        if not (self.dense and self.lexical and self.dense_range is not None and self.dense_confidence >= 1.0):
            return None
        return self.dense[0][0] if self.dense[0][0] == self.lexical[0][0] else None


def min_max(hits: Hits) -> dict[str, float]:
    """Each hit's score scaled to [0, 1] within its list (all 1 when the list's scores are equal)."""
    if not hits:
        return {}
    values = np.array([s for _, s in hits], dtype=np.float64)
    low, spread = values.min(), values.max() - values.min()
    scaled = (values - low) / spread if spread > 0 else np.ones_like(values)
    return {doc_id: float(v) for (doc_id, _), v in zip(hits, scaled, strict=True)}


def reciprocal_ranks(hits: Hits, k: int) -> dict[str, float]:
    """1 / (k + rank) of each hit (Cormack et al.'s reciprocal-rank fusion)."""
    return {doc_id: 1.0 / (k + rank) for rank, (doc_id, _) in enumerate(hits, 1)}


def calibrated_parts(found: Candidates) -> tuple[dict[str, float], dict[str, float]]:
    """Each list's scaled scores: cosines min-max scaled; BM25 min-max scaled and blended with coverage, so that a
    document holding every term of the query stands above one holding its commonest term many times."""
    lexical = min_max(found.lexical)
    share = COVERAGE_SHARE if found.coverage else 0.0
    return min_max(found.dense), {d: (1 - share) * v + share * found.coverage.get(d, 0.0) for d, v in lexical.items()}


def parts(found: Candidates, ranking: Ranking) -> tuple[dict[str, float], dict[str, float]]:
    """What each document's fused score takes from the dense list and from the lexical one (0 where a list missed it).

    rrf: (1 - w) / (k + dense rank) and w / (k + lexical rank). convex: (1 - w) mm(cosine) and w mm(BM25), each
    min-max scaled within its list. calibrated: (1 - w) c_d mm(cosine) and w c_l (mm(BM25) + coverage) / 2, where c_d
    says how far the best cosine stands in the collection's range and c_l how much of the query the best lexical
    match holds: a list with nothing to say for this query (an identifier's cosines, a paraphrase's words) is not
    stretched over [0, 1]. A near copy of the query (`Candidates.near_copy`) keeps its own parts, and the others are
    weighed as if it were not stored: its cosine and its BM25 would read every list as confident and squeeze the
    others' scores toward 0 (measured on long queries: docs/search.md, "Long queries")."""
    copy = found.near_copy() if ranking.fusion == "calibrated" else None
    if copy is not None:
        (dense, lexical), (own_dense, own_lexical) = _parts(found.without(copy), ranking), _parts(found, ranking)
        return {**dense, copy: own_dense[copy]}, {**lexical, copy: own_lexical[copy]}
    return _parts(found, ranking)


def _parts(found: Candidates, ranking: Ranking) -> tuple[dict[str, float], dict[str, float]]:
    w = ranking.weight
    if ranking.fusion == "rrf":
        dense, lexical = reciprocal_ranks(found.dense, ranking.rrf_k), reciprocal_ranks(found.lexical, ranking.rrf_k)
        wd, wl = 1.0 - w, w
    elif ranking.fusion == "convex":
        (dense, lexical), wd, wl = (min_max(found.dense), min_max(found.lexical)), 1.0 - w, w
    else:
        (dense, lexical), wd = calibrated_parts(found), (1.0 - w) * found.dense_confidence
        wl = w * found.lexical_confidence
    return {d: wd * v for d, v in dense.items()}, {d: wl * v for d, v in lexical.items()}


def fuse(found: Candidates, ranking: Ranking) -> list[tuple[str, float]]:
    """The ranked documents of a mode: one list, or both fused (see `parts`), best first; equal scores in the order
    of their ids, so that a ranking never depends on the order documents arrived in."""
    if ranking.mode == "dense":
        scores = dict(found.dense)
    elif ranking.mode == "lexical":
        scores = dict(found.lexical)
    else:
        dense, lexical = parts(found, ranking)
        scores = {d: dense.get(d, 0.0) + lexical.get(d, 0.0) for d in {**dense, **lexical}}
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def explanations(found: Candidates, ranking: Ranking, doc_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """For each document: its rank and cosine in the dense list, its rank, BM25 and coverage in the lexical one (None
    where a list missed it), and in hybrid mode what the fused score took from each."""
    dense_at = {d: (rank, s) for rank, (d, s) in enumerate(found.dense, 1)}
    lexical_at = {d: (rank, s) for rank, (d, s) in enumerate(found.lexical, 1)}
    dense_part, lexical_part = parts(found, ranking) if ranking.mode == "hybrid" else ({}, {})
    out = {}
    for d in doc_ids:
        dense = {"rank": dense_at[d][0], "cosine": dense_at[d][1]} if d in dense_at else None
        lexical = (
            {"rank": lexical_at[d][0], "bm25": lexical_at[d][1], "coverage": found.coverage.get(d)}
            if d in lexical_at
            else None
        )
        fused = (
            {"dense": dense_part.get(d, 0.0), "lexical": lexical_part.get(d, 0.0)}
            if dense_part or lexical_part
            else None
        )
        out[d] = {"dense": dense, "lexical": lexical, "fused": fused}
    return out
