"""`auto`: fit every candidate correction from one spectrum, score it on labelled pairs, keep the safest best."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import rankdata

from app.core.names import Method
from app.correction.isotropy import isoscore_from_variances
from app.correction.methods import Spectrum, whitening_scale
from app.correction.stats import CovarianceStats

ALPHAS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
EPSILONS = (0.0, 0.1, 0.3)
DROPS = (0, 1, 2, 4, 8)
DIMS = (64, 128, 192, 256, 320)
DIMS_TOLERANCE = 0.1  # Spearman x100 points given up for fewer dims
BOOTSTRAP_SAMPLES = 1000
MIN_GAIN = 0.1  # a correction replaces `none` only if its gain's 95% lower bound is worth this much

# Without labelled pairs: the candidate whose smallest gain over the four poolings of all-MiniLM-L6-v2
# was largest on STS-B train + dev (+0.33 mean, +1.75 cls, +0.30 first_last_avg, +8.44 embedding_avg).
DEFAULT_PARAMS = {"alpha": 0.15, "eps": 0.1, "drop": 0, "dim": 256}


def default_choice(dim: int) -> tuple[str, dict[str, Any]]:
    """The documented correction for `auto` when no labelled pairs are given."""
    return Method.WHITENING, {**DEFAULT_PARAMS, "dim": min(DEFAULT_PARAMS["dim"], dim)}


@dataclass(frozen=True)
class TuningPairs:
    """Labelled pairs already encoded: left and right vectors, gold scores, and where they came from."""

    left: np.ndarray
    right: np.ndarray
    gold: np.ndarray
    name: str = ""
    texts: tuple[list[str], list[str]] | None = None  # for corrections that encode their own way (SIF)

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.left, self.right, self.gold

    @classmethod
    def concat(cls, parts: list[TuningPairs]) -> TuningPairs:
        """Several files scored as one set (more pairs, less noise in the choice)."""
        texts = None
        held = [p.texts for p in parts if p.texts is not None]
        if len(held) == len(parts):
            texts = ([t for left, _ in held for t in left], [t for _, right in held for t in right])
        return cls(
            np.vstack([p.left for p in parts]),
            np.vstack([p.right for p in parts]),
            np.concatenate([p.gold for p in parts]),
            "+".join(p.name for p in parts),
            texts,
        )


@dataclass(frozen=True)
class Candidate:
    """One correction of the searched family and its Spearman x100 on the tuning pairs."""

    method: str
    params: dict[str, Any]
    dim: int
    score: float
    isotropy: float  # IsoScore of the corrected fitting corpus: the tie-break between equal scores
    cosines: np.ndarray = field(repr=False, compare=False)


def _spearman(x: np.ndarray, gold_ranks: np.ndarray) -> float:
    r = rankdata(x)
    return float(100.0 * np.corrcoef(r, gold_ranks)[0, 1])


def _cosines_at(
    products: np.ndarray, sq_left: np.ndarray, sq_right: np.ndarray, weights: np.ndarray, dims: Sequence[int]
) -> np.ndarray:
    """Cosines in the principal basis, each axis weighted, using the first k axes for each k: (n, len(dims))."""
    mask = np.zeros((len(weights), len(dims)))
    for i, k in enumerate(dims):
        mask[:k, i] = weights[:k]
    norms = np.sqrt((sq_left @ mask) * (sq_right @ mask))
    return (products @ mask) / np.maximum(norms, 1e-12)


Member = tuple[str, dict[str, Any], int]  # a method, its parameters, its dims


def family(alpha: float, eps: float, drop: int, full: int) -> list[Member]:
    """The (method, params, dims) members that share one projection: every prefix of its columns."""
    if alpha == 0.0:  # a rotation: at full dims it is centring (drop 0) or ABTT (drop > 0)
        if eps > 0.0:
            return []  # eps shrinks toward the mean of S, which alpha 0 ignores: same as eps 0
        full_member: Member = (
            (Method.CENTER, {}, full + drop) if drop == 0 else (Method.ABTT, {"drop": drop}, full + drop)
        )
        members = [full_member]
    else:
        members = [(Method.WHITENING, {"dim": None, "alpha": alpha, "eps": eps, "drop": drop}, full)]
    members += [(Method.WHITENING, {"dim": k, "alpha": alpha, "eps": eps, "drop": drop}, k) for k in DIMS if k < full]
    return members


def score_candidates(spectrum: Spectrum, left: np.ndarray, right: np.ndarray, gold: np.ndarray) -> list[Candidate]:
    """Spearman of every candidate on the pairs: every member is a weighting of the same principal axes."""
    gold_ranks = rankdata(gold)
    raw = np.sum(left * right, axis=1) / np.maximum(np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1), 1e-12)
    s = spectrum.variances
    out = [Candidate(Method.NONE, {}, spectrum.dim, _spearman(raw, gold_ranks), isoscore_from_variances(s), raw)]
    # In the principal basis each candidate only scales axes (by S^-alpha) and keeps a range of them, so
    # the per-axis products are computed once and every candidate is a weighted sum of them.
    pa = (left - spectrum.mean) @ spectrum.directions
    pb = (right - spectrum.mean) @ spectrum.directions
    products, sq_left, sq_right = pa * pb, pa * pa, pb * pb
    for drop in DROPS:
        if drop >= spectrum.rank:
            continue
        kept = slice(drop, spectrum.dim)
        for alpha in ALPHAS:
            for eps in EPSILONS:
                members = family(alpha, eps, drop, spectrum.dim - drop)
                if not members:
                    continue
                scale = whitening_scale(spectrum, alpha=alpha, eps=eps)[kept]
                axes = [dims if method == Method.WHITENING else dims - drop for method, _, dims in members]
                cos = _cosines_at(products[:, kept], sq_left[:, kept], sq_right[:, kept], scale**2, axes)
                variances = s[kept] * scale**2  # the corrected corpus's variances along the kept axes
                for (method, params, dims), k, c in zip(members, axes, cos.T, strict=True):
                    iso = isoscore_from_variances(variances[:k])
                    out.append(Candidate(method, params, dims, _spearman(c, gold_ranks), iso, c))
    return out


def gain_lower_bound(candidate: Candidate, baseline: Candidate, gold: np.ndarray, *, seed: int = 0) -> float:
    """One-sided 95% lower bound of the gain over `baseline` (points), from a paired bootstrap of the pairs."""
    rng = np.random.default_rng(seed)
    n = len(gold)
    gains = np.empty(BOOTSTRAP_SAMPLES)
    for i in range(BOOTSTRAP_SAMPLES):
        idx = rng.integers(0, n, n)
        g = rankdata(gold[idx])
        gains[i] = _spearman(candidate.cosines[idx], g) - _spearman(baseline.cosines[idx], g)
    return float(np.quantile(gains, 0.05))


@dataclass(frozen=True)
class Selection:
    """What `auto` chose, why, and against what."""

    chosen: Candidate
    raw: Candidate
    best: Candidate
    gain_lower_bound: float
    n_candidates: int
    tuned_on: str

    def record(self) -> dict[str, Any]:
        """The provenance kept in the artifact and shown by /info."""
        return {
            "tuned_on": self.tuned_on,
            "score": round(self.chosen.score, 2),
            "raw_score": round(self.raw.score, 2),
            "best_score": round(self.best.score, 2),
            "gain_lower_bound": round(self.gain_lower_bound, 2),
            "candidates": self.n_candidates,
            "rule": (
                f"within {DIMS_TOLERANCE} of the best Spearman: fewest dims, then most isotropic; replaces "
                f"none only if the 95% bootstrap lower bound of its gain is >= {MIN_GAIN}"
            ),
        }


def select(candidates: list[Candidate], gold: np.ndarray, *, tuned_on: str = "") -> Selection:
    """Within DIMS_TOLERANCE of the best score: fewest dims, then most isotropic; `none` unless its gain is clear."""
    raw = next(c for c in candidates if c.method == Method.NONE)
    best = max(candidates, key=lambda c: c.score)
    close = [c for c in candidates if c.score >= best.score - DIMS_TOLERANCE]
    chosen = min(close, key=lambda c: (c.dim, -c.isotropy))
    lower = 0.0 if chosen is raw else gain_lower_bound(chosen, raw, gold)
    if lower < MIN_GAIN:
        chosen = raw
    return Selection(chosen, raw, best, lower, len(candidates), tuned_on)


def select_for(stats: CovarianceStats, tuning: TuningPairs) -> Selection:
    """What `auto` serves for a corpus's statistics, tuned on labelled pairs already encoded."""
    return select(score_candidates(Spectrum.of(stats), *tuning.arrays), tuning.gold, tuned_on=tuning.name)
