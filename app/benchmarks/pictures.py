"""Pictures of spaces: 2-D PCA and t-SNE of sentences coloured by a label (their pair's gold score, or a metadata
field of indexed documents), and the cosines of random pairs; drawn offline from the vectors they are given."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from app.correction.isotropy import random_pair_cosines
from app.correction.pipeline import l2_normalize

BUCKETS = np.array([1.0, 2.0, 3.0, 4.0])  # gold 0-1, 1-2, 2-3, 3-4, 4-5: five colours
GOLD_NAMES = ["gold 0-1", "1-2", "2-3", "3-4", "4-5"]
PROJECTIONS = ("PCA", "t-SNE")
TOP_VALUES = 8  # a metadata field's most common values get a colour each; the rest share "other"


def projected(x: np.ndarray, how: str, *, seed: int = 0) -> np.ndarray:
    """The unit rows (what cosine sees) in two dimensions: their top two principal axes, or a t-SNE map."""
    from sklearn.decomposition import PCA
    from sklearn.manifold import TSNE

    unit = l2_normalize(np.asarray(x, dtype=np.float64))
    if how == "PCA":
        points: np.ndarray = PCA(n_components=2, random_state=seed).fit_transform(unit)
        return points
    perplexity = min(30.0, (len(unit) - 1) / 3)
    mapped: np.ndarray = TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed).fit_transform(unit)
    return mapped


def gold_buckets(gold: np.ndarray) -> np.ndarray:
    """Each pair's gold score as one of five buckets (0-1 ... 4-5), repeated for its two sentences."""
    bucket = np.searchsorted(BUCKETS, np.asarray(gold), side="right")
    return np.concatenate([bucket, bucket])


def field_labels(values: list[Any]) -> tuple[np.ndarray, list[str]]:
    """A metadata field's values as colour labels: the most common ones each their own, then "other", "(none)"."""
    counts = Counter(str(v) for v in values if v is not None)
    top = sorted(counts, key=lambda v: (-counts[v], v))[:TOP_VALUES]
    missing = any(v is None for v in values)
    names = top + (["other"] if len(counts) > len(top) else []) + (["(none)"] if missing else [])
    index = {name: i for i, name in enumerate(names)}
    labels = [index["(none)"] if v is None else index.get(str(v), index.get("other", 0)) for v in values]
    return np.array(labels, dtype=np.int64), names


def plot_spaces(
    path: Path,
    spaces: dict[str, np.ndarray],
    labels: np.ndarray,
    names: list[str],
    title: str,
    *,
    ordered: bool = False,
) -> Path:
    """One column per space (rows in the order of `labels`), a PCA row and a t-SNE row, and a row of random-pair
    cosine histograms; colour i is `names[i]`, on a sequential scale when the names are `ordered` (gold)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scale = plt.get_cmap("viridis" if ordered else "tab10")
    fig, axes = plt.subplots(3, len(spaces), figsize=(4.2 * len(spaces), 11), dpi=100, squeeze=False)
    for col, (name, x) in enumerate(spaces.items()):
        for row, how in enumerate(PROJECTIONS):
            xy = projected(x, how)
            ax = axes[row, col]
            for i, label in enumerate(names):
                mine = labels == i
                shade = scale(i / max(len(names) - 1, 1)) if ordered else scale(i % 10)
                ax.scatter(xy[mine, 0], xy[mine, 1], color=shade, s=6, alpha=0.8, label=label)
            ax.set_title(f"{name}: {how}")
            ax.set_xticks([])
            ax.set_yticks([])
        cosines = random_pair_cosines(x, pairs=5000)
        hist = axes[2, col]
        hist.hist(cosines, bins=np.linspace(-1, 1, 81), density=True, alpha=0.8)
        hist.set_title(f"{name}\nrandom pairs: mean cosine {cosines.mean():.2f}", fontsize=9)
        hist.set_xlabel("cosine")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="upper right", markerscale=3, fontsize=8)
    fig.suptitle(title)
    fig.savefig(path)
    plt.close(fig)
    return path
