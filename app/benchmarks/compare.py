"""`compare`: every correction beside the others, per pooling: STS Spearman, dims, fit time, apply cost."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from app.benchmarks.report import REPORT_METHODS
from app.core.names import Method
from app.correction import Correction, CorrectionArtifact
from app.correction.sif import DEFAULT_A
from app.offline.datasets import Pairs
from app.offline.evaluation import spearman_x100
from app.offline.fit import applies_to

# (label, method, params): the report's rows (the linear methods and `auto`), then flow and SIF.
COMPARE_METHODS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    *REPORT_METHODS,
    ("flow", Method.FLOW, {}),
    (f"sif (a={DEFAULT_A:g})", Method.SIF, {"a": DEFAULT_A}),
)
APPLY_ROWS = 1000
APPLY_REPEATS = 7


@dataclass(frozen=True)
class ComparisonRow:
    """One method on one pooling."""

    pooling: str
    label: str
    method: str
    params: dict[str, Any]
    spearman: float
    dim: int
    fit_seconds: float
    apply_ms_per_1000: float


def apply_cost_ms(correction: Correction, raw: np.ndarray) -> float:
    """Best-of-several milliseconds to correct and normalize APPLY_ROWS vectors (the per-request cost)."""
    rows = np.resize(raw, (APPLY_ROWS, raw.shape[1])).astype(np.float32)
    best = float("inf")
    for _ in range(APPLY_REPEATS):
        start = time.perf_counter()
        correction.apply(rows)
        best = min(best, time.perf_counter() - start)
    return 1000.0 * best


def compare_pooling(
    pooling: str,
    fit: Callable[[str, dict[str, Any]], CorrectionArtifact],
    correct: Callable[[Correction, list[str], np.ndarray], np.ndarray],
    test: Pairs,
    test_raw: np.ndarray,
    methods: Sequence[tuple[str, str, dict[str, Any]]] = COMPARE_METHODS,
) -> list[ComparisonRow]:
    """Fit each method with `fit`, score it on `test` (its vectors from `correct`), time fitting and applying."""
    texts, n = test.left + test.right, len(test)
    rows = []
    for label, method, params in methods:
        if not applies_to(method, pooling):
            continue
        start = time.perf_counter()
        artifact = fit(method, params)
        seconds = time.perf_counter() - start
        correction = Correction(artifact)
        corrected = correct(correction, texts, test_raw)
        score = spearman_x100(corrected[:n], corrected[n:], test.scores)
        cost = apply_cost_ms(correction, test_raw)
        rows.append(
            ComparisonRow(pooling, label, artifact.method, artifact.params, score, artifact.out_dim, seconds, cost)
        )
    return rows


def markdown_table(rows: list[ComparisonRow]) -> str:
    """Methods down, poolings across: Spearman x100 (dims), then fit seconds and apply ms per 1,000 vectors."""
    poolings = list(dict.fromkeys(r.pooling for r in rows))
    labels = list(dict.fromkeys(r.label for r in rows))
    cell = {(r.label, r.pooling): r for r in rows}
    lines = [
        "| method | " + " | ".join(poolings) + " | fit s | apply ms / 1k |",
        "|---" * (len(poolings) + 3) + "|",
    ]
    for label in labels:
        present = [cell[(label, p)] for p in poolings if (label, p) in cell]
        scores = [
            f"{cell[(label, p)].spearman:.2f} ({cell[(label, p)].dim})" if (label, p) in cell else "n/a"
            for p in poolings
        ]
        fit_s = "/".join(f"{r.fit_seconds:.1f}" for r in present)
        apply_ms = max(r.apply_ms_per_1000 for r in present)
        lines.append(f"| {label} | " + " | ".join(scores) + f" | {fit_s} | {apply_ms:.2f} |")
    return "\n".join(lines)


def as_records(rows: list[ComparisonRow]) -> list[dict[str, Any]]:
    return [
        {
            **asdict(r),
            "spearman": round(r.spearman, 2),
            "fit_seconds": round(r.fit_seconds, 2),
            "apply_ms_per_1000": round(r.apply_ms_per_1000, 3),
        }
        for r in rows
    ]
