"""The alignment-uniformity plane (Wang & Isola, 2020) of each pooling's spaces on labelled test pairs: why a
correction or an adaptation helped (more uniform) or hurt (less aligned)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.correction import Correction
from app.correction.isotropy import POSITIVE_GOLD, alignment_uniformity
from app.correction.selection import TuningPairs


def geometry_points(
    test: TuningPairs, correction: Correction, adapted: TuningPairs | None = None
) -> dict[str, dict[str, Any]]:
    """Alignment (pairs with gold >= POSITIVE_GOLD) and uniformity (each test sentence once) of the raw space, the
    corrected one and, when given, the adapted model's own space (`test` carries its texts)."""
    if test.texts is None:
        raise ValueError("the test pairs carry no texts: uniformity counts each sentence once")
    texts = test.texts[0] + test.texts[1]
    spaces = {
        "raw": test,
        "corrected": TuningPairs(correction.apply(test.left), correction.apply(test.right), test.gold),
    }
    if adapted is not None:
        spaces["adapted"] = adapted
    return {name: alignment_uniformity(p.left, p.right, p.gold, texts) for name, p in spaces.items()}


def plot_geometry(path: Path, points: dict[str, dict[str, Any]], title: str) -> Path:
    """One point per space: uniformity across, alignment up; lower left is better on both."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4.5), dpi=110)
    for name, point in points.items():
        ax.scatter(point["uniformity"], point["alignment"], s=60, label=name)
        ax.annotate(name, (point["uniformity"], point["alignment"]), textcoords="offset points", xytext=(6, 4))
    ax.set_xlabel("uniformity: log E exp(-2 |x - y|^2), random pairs (lower is more uniform)")
    ax.set_ylabel(f"alignment: E |x - y|^2, pairs with gold >= {POSITIVE_GOLD:g} (lower is closer)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def geometry_rows(pooling: str, points: dict[str, dict[str, Any]]) -> list[str]:
    """Markdown table rows: pooling, space, alignment, uniformity."""
    return [f"| {pooling} | {name} | {p['alignment']:.3f} | {p['uniformity']:.3f} |" for name, p in points.items()]
