"""`report`: the methods x poolings table on STS-B test, isotropy raw vs corrected, and plots for people."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from app.benchmarks.geometry import geometry_rows
from app.core.names import Method
from app.correction import Correction, CorrectionArtifact
from app.correction.isotropy import principal_variances, random_pair_cosines
from app.correction.pipeline import l2_normalize
from app.correction.selection import TuningPairs
from app.offline.evaluation import score_correction

# The table's rows: what each method looks like with its usual parameters, then `auto`.
REPORT_METHODS: tuple[tuple[str, Method, dict[str, Any]], ...] = (
    ("none", Method.NONE, {}),
    ("center", Method.CENTER, {}),
    ("abtt (D=1)", Method.ABTT, {"drop": 1}),
    ("whitening (alpha 0.5)", Method.WHITENING, {"alpha": 0.5}),
    ("auto", Method.AUTO, {}),
)
SIMILAR_GOLD = 4.0  # STS gold >= 4 of 5: "mostly equivalent" pairs
HIST_PAIRS = 5000


@dataclass
class PoolingResult:
    """Everything the report shows for one pooling."""

    pooling: str
    scores: dict[str, float]
    dims: dict[str, int]
    fit_seconds: dict[str, float]
    auto: CorrectionArtifact
    # space -> alignment, uniformity on the test pairs
    geometry: dict[str, dict[str, Any]] = field(default_factory=dict)


def evaluate_methods(
    fit: Callable[[str, dict[str, Any]], CorrectionArtifact], test: TuningPairs, pooling: str
) -> PoolingResult:
    """Fit every report method with `fit(method, params)` and score it on the test pairs."""
    scores, dims, seconds = {}, {}, {}
    auto = None
    for label, method, params in REPORT_METHODS:
        start = time.perf_counter()
        artifact = fit(method, params)
        seconds[label] = time.perf_counter() - start
        scores[label] = score_correction(Correction(artifact), test)
        dims[label] = artifact.out_dim
        if method == Method.AUTO:
            auto = artifact
    if auto is None:
        raise ValueError("the report's methods include auto")
    return PoolingResult(pooling, scores, dims, seconds, auto)


def _similar_pair_cosines(pairs: TuningPairs) -> np.ndarray:
    keep = pairs.gold >= SIMILAR_GOLD
    cosines: np.ndarray = np.sum(l2_normalize(pairs.left[keep]) * l2_normalize(pairs.right[keep]), axis=1)
    return cosines


def plot_spectrum(path: Path, corpus: np.ndarray, correction: Correction, title: str) -> Path:
    """Share of variance per principal direction, raw vs corrected, on a log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for label, x in (("raw", corpus), (f"corrected ({correction.id})", correction.apply(corpus))):
        v = principal_variances(l2_normalize(x))
        share = v / v.sum()
        ax.semilogy(np.arange(1, len(share) + 1), np.maximum(share, 1e-12), label=label, linewidth=2)
    ax.set_xlabel("principal direction (largest first)")
    ax.set_ylabel("share of variance (log scale)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_cosines(path: Path, corpus: np.ndarray, similar: TuningPairs, correction: Correction, title: str) -> Path:
    """Histograms of cosines: random pairs vs gold-similar pairs, raw (left) and corrected (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), dpi=110, sharey=True)
    fixed = TuningPairs(correction.apply(similar.left), correction.apply(similar.right), similar.gold)
    panels = (("raw", corpus, similar), ("corrected", correction.apply(corpus), fixed))
    bins = np.linspace(-1, 1, 81)
    for ax, (name, x, pairs) in zip(axes, panels, strict=True):
        rand, sim = random_pair_cosines(x, pairs=HIST_PAIRS), _similar_pair_cosines(pairs)
        ax.hist(rand, bins=bins, alpha=0.6, density=True, label=f"random pairs (mean {rand.mean():.2f})")
        ax.hist(sim, bins=bins, alpha=0.6, density=True, label=f"gold >= {SIMILAR_GOLD:g} (mean {sim.mean():.2f})")
        ax.set_title(f"{name}")
        ax.set_xlabel("cosine similarity")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    axes[0].set_ylabel("density")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _isotropy_rows(result: PoolingResult) -> list[str]:
    iso = result.auto.extra.get("isotropy", {})
    raw, fixed = iso.get("raw", {}), iso.get("corrected", {})
    names = {
        "mean_random_cosine": "mean cosine of random pairs (0 is isotropic)",
        "isoscore": "IsoScore (1 is isotropic)",
        "partition_ratio": "I(W) partition ratio (1 is isotropic)",
        "effective_rank": "effective rank",
        "top_direction_share": "variance share of the top direction",
    }
    return [f"| {label} | {raw.get(key, '')} | {fixed.get(key, '')} |" for key, label in names.items()]


def write_markdown(
    path: Path, results: list[PoolingResult], *, backbone: str, sources: dict[str, Any], plots: dict[str, Any]
) -> Path:
    """The summary: the table, isotropy of each auto correction, and links to the plots."""
    labels = [label for label, _, _ in REPORT_METHODS]
    lines = [
        f"# Correction report: {backbone}",
        "",
        f"STS-B test Spearman x100 (cosine vs gold). Fitted on `{sources['fit']}`; `auto` tuned on "
        f"`{sources['tune']}`; scored on `{sources['test']}`. Output dims in parentheses.",
        "",
        "| pooling | " + " | ".join(labels) + " |",
        "|---" * (len(labels) + 1) + "|",
    ]
    for r in results:
        cells = [f"{r.scores[label]:.2f} ({r.dims[label]})" for label in labels]
        lines.append(f"| {r.pooling} | " + " | ".join(cells) + " |")
    lines += ["", "`auto` chose:", ""]
    for r in results:
        sel = r.auto.extra.get("selection", {})
        lines.append(
            f"- {r.pooling}: `{r.auto.method}` {r.auto.params}, tuning score {sel.get('score')} "
            f"(raw {sel.get('raw_score')}, gain lower bound {sel.get('gain_lower_bound')})"
        )
    lines += [
        "",
        "Alignment (pairs with gold >= 4) and uniformity (each distinct test sentence once) on "
        f"`{sources['test']}`: Wang & Isola's two losses, lower is better for both.",
        "",
        "| pooling | space | alignment | uniformity |",
        "|---|---|---|---|",
    ]
    lines += [row for r in results for row in geometry_rows(r.pooling, r.geometry)]
    for r in results:
        lines += ["", f"## {r.pooling}: isotropy of the fitting corpus, raw vs `auto`", ""]
        lines += ["| figure | raw | corrected |", "|---|---|---|", *_isotropy_rows(r), ""]
        lines += [f"![{name}]({file.name})" for name, file in plots.get(r.pooling, {}).items()]
    path.write_text("\n".join(lines) + "\n")
    return path
