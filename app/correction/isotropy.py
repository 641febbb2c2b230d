"""How isotropic a cloud of sentence vectors is, and how close it keeps paraphrases: the figures the literature
uses, in pure numpy."""

from __future__ import annotations

from typing import Any

import numpy as np

from app.correction.pipeline import Correction, l2_normalize

RANDOM_PAIRS = 10_000
UNIFORMITY_PAIRS = 200_000  # uniformity over every pair of a cloud this small, else over this many random pairs
UNIFORMITY_T = 2.0  # Wang & Isola's t
POSITIVE_GOLD = 4.0  # labelled pairs at or above this gold score (STS-B's 0-5 scale) are paraphrases


def isoscore_from_variances(variances: np.ndarray) -> float:
    """IsoScore (Rudman et al. 2022) from the variances along the principal axes: 1 isotropic, 0 rank one."""
    v = np.clip(np.asarray(variances, dtype=np.float64), 0.0, None)
    n = v.shape[0]
    if n < 2 or not v.any():
        return 0.0
    v_hat = np.sqrt(n) * v / np.linalg.norm(v)
    defect = np.linalg.norm(v_hat - 1.0) / np.sqrt(2.0 * (n - np.sqrt(n)))
    utilized = (n - defect**2 * (n - np.sqrt(n))) ** 2 / n**2  # share of dims used isotropically
    return float((n * utilized - 1.0) / (n - 1.0))


def principal_variances(x: np.ndarray) -> np.ndarray:
    """Variances along the principal axes (PCA reorientation), largest first."""
    x = np.asarray(x, dtype=np.float64)
    centered = x - x.mean(axis=0)
    return np.linalg.svd(centered, compute_uv=False) ** 2 / max(len(x) - 1, 1)


def isoscore(x: np.ndarray) -> float:
    """IsoScore of a point cloud (rows are points)."""
    return isoscore_from_variances(principal_variances(x))


def effective_rank(variances: np.ndarray) -> float:
    """exp of the entropy of the normalized spectrum (Roy & Vetterli 2007): how many dims are really used."""
    v = np.clip(np.asarray(variances, dtype=np.float64), 0.0, None)
    if not v.any():
        return 0.0
    p = v[v > 0] / v.sum()
    return float(np.exp(-(p * np.log(p)).sum()))


def partition_ratio(x: np.ndarray) -> float:
    """I(W) of Mu & Viswanath (2018): min over max of Z(c) = sum exp(c.x), c over the eigenvectors of X^T X."""
    x = np.asarray(x, dtype=np.float64)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    logits = x @ vt.T  # (n, directions); logsumexp per direction, in log space to avoid overflow
    peak = logits.max(axis=0)
    log_z = peak + np.log(np.exp(logits - peak).sum(axis=0))
    return float(np.exp(log_z.min() - log_z.max()))


def random_pair_cosines(x: np.ndarray, *, pairs: int = RANDOM_PAIRS, seed: int = 0) -> np.ndarray:
    """Cosines of random pairs of distinct rows (empty with fewer than two rows)."""
    unit = l2_normalize(np.asarray(x, dtype=np.float64))
    n = len(unit)
    if n < 2:
        return np.empty(0)
    rng = np.random.default_rng(seed)
    i = rng.integers(0, n, pairs)
    j = (i + rng.integers(1, n, pairs)) % n  # never the same row
    cosines: np.ndarray = np.sum(unit[i] * unit[j], axis=1)
    return cosines


def mean_random_cosine(x: np.ndarray, *, pairs: int = RANDOM_PAIRS, seed: int = 0) -> float:
    """Average cosine of random pairs of distinct rows: near 0 when isotropic, near 1 in a narrow cone."""
    cosines = random_pair_cosines(x, pairs=pairs, seed=seed)
    return float(np.mean(cosines)) if len(cosines) else 0.0


def isotropy_report(x: np.ndarray) -> dict[str, Any]:
    """The figures shown by `isotropy` and /info, on unit vectors (what cosine similarity sees)."""
    unit = l2_normalize(np.asarray(x, dtype=np.float64))
    variances = principal_variances(unit)
    return {
        "mean_random_cosine": round(mean_random_cosine(unit), 4),
        "isoscore": round(isoscore_from_variances(variances), 4),
        "partition_ratio": round(partition_ratio(unit), 4),
        "effective_rank": round(effective_rank(variances), 1),
        "top_direction_share": round(float(variances[0] / variances.sum()) if variances.any() else 0.0, 4),
        "dim": int(unit.shape[1]),
        "n": int(unit.shape[0]),
    }


def alignment(left: np.ndarray, right: np.ndarray) -> float:
    """Wang & Isola's alignment (alpha 2): mean squared distance between the unit vectors of positive pairs;
    0 when every paraphrase lands on its partner, lower is better."""
    a, b = l2_normalize(np.asarray(left, dtype=np.float64)), l2_normalize(np.asarray(right, dtype=np.float64))
    return float(np.mean(np.sum((a - b) ** 2, axis=1))) if len(a) else float("nan")


def uniformity(x: np.ndarray, *, t: float = UNIFORMITY_T, max_pairs: int = UNIFORMITY_PAIRS, seed: int = 0) -> float:
    """Wang & Isola's uniformity: log of the mean of exp(-t x squared distance) over pairs of unit vectors, every
    distinct pair of a small cloud, else `max_pairs` random ones; lower is more uniform (-4 at best for t = 2 in
    many dims, 0 for a single point)."""
    unit = l2_normalize(np.asarray(x, dtype=np.float64))
    n = len(unit)
    if n < 2:
        return float("nan")
    if n * (n - 1) // 2 <= max_pairs:
        i, j = np.triu_indices(n, k=1)
        cosines = np.sum(unit[i] * unit[j], axis=1)
    else:
        cosines = random_pair_cosines(unit, pairs=max_pairs, seed=seed)
    squared = np.clip(2.0 - 2.0 * cosines, 0.0, None)  # |a - b|^2 of unit vectors
    peak = float((-t * squared).max())
    return float(peak + np.log(np.mean(np.exp(-t * squared - peak))))


def positives(scores: np.ndarray, gold: float = POSITIVE_GOLD) -> np.ndarray:
    """Which labelled pairs count as paraphrases for `alignment`: gold score at or above `gold`."""
    return np.asarray(scores, dtype=np.float64) >= gold


def alignment_uniformity(
    left: np.ndarray, right: np.ndarray, scores: np.ndarray, texts: list[str], *, gold: float = POSITIVE_GOLD
) -> dict[str, Any]:
    """Alignment on the positive pairs and uniformity over each distinct sentence of the pairs once (`texts`: the
    left then the right sentences, so two spaces of the same pairs are measured on the same pairs of sentences)."""
    keep = positives(scores, gold)
    _, first = np.unique(np.asarray(texts, dtype=object).astype(str), return_index=True)
    return {
        "alignment": round(alignment(left[keep], right[keep]), 4),
        "uniformity": round(uniformity(np.concatenate([left, right])[np.sort(first)]), 4),
        "positive_pairs": int(keep.sum()),
    }


def space_geometry(
    correction: Correction,
    sample: np.ndarray,
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    *,
    gold: float = POSITIVE_GOLD,
) -> dict[str, Any]:
    """Uniformity of the fitting corpus's `sample` and alignment of the positive labelled `pairs` (left, right,
    gold; none: no alignment), raw and corrected: what /info shows of the served correction. A correction that
    pools its own way (SIF) would need the pairs encoded again, so its corrected alignment is left to `eval`."""
    record: dict[str, Any] = {"gold_threshold": gold, "positive_pairs": 0, "uniformity_sentences": int(len(sample))}
    left = right = None
    if pairs is not None:
        keep = positives(pairs[2], gold)
        left, right = pairs[0][keep], pairs[1][keep]
        record["positive_pairs"] = int(keep.sum())
    for name, mapped in (("raw", None), ("corrected", correction)):
        space = sample if mapped is None else mapped.apply(sample)
        aligned = None
        if left is not None and right is not None and len(left) and (mapped is None or mapped.token_weights is None):
            aligned = alignment(left, right) if mapped is None else alignment(mapped.apply(left), mapped.apply(right))
        record[name] = {
            "alignment": None if aligned is None else round(aligned, 4),
            "uniformity": round(uniformity(space), 4),
        }
    return record
