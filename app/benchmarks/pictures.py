"""Pictures of spaces: 2-D PCA and t-SNE of labelled pairs' sentences, coloured by the pair's gold score, and
the cosines of random pairs; drawn from the vectors they are given, offline, for `report` and the page."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from app.correction.isotropy import random_pair_cosines
from app.correction.pipeline import l2_normalize

BUCKETS = np.array([1.0, 2.0, 3.0, 4.0])  # gold 0-1, 1-2, 2-3, 3-4, 4-5: five colours
PROJECTIONS = ("PCA", "t-SNE")


def projected(x: np.ndarray, how: str, *, seed: int = 0) -> np.ndarray:
    """The unit rows (what cosine sees) in two dimensions: their top two principal axes, or a t-SNE map."""
    from sklearn.decomposition import PCA
    from sklearn.manifold import TSNE

    unit = l2_normalize(np.asarray(x, dtype=np.float64))
    if how == "PCA":
        return PCA(n_components=2, random_state=seed).fit_transform(unit)
    perplexity = min(30.0, (len(unit) - 1) / 3)
    return TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed).fit_transform(unit)


def gold_buckets(gold: np.ndarray) -> np.ndarray:
    """Each pair's gold score as one of five buckets (0-1 ... 4-5), repeated for its two sentences."""
    bucket = np.searchsorted(BUCKETS, np.asarray(gold), side="right")
    return np.concatenate([bucket, bucket])


def plot_spaces(path: Path, spaces: dict[str, np.ndarray], gold: np.ndarray, title: str) -> Path:
    """One column per space (each the pairs' left then right sentences), a PCA row and a t-SNE row, and a
    row of random-pair cosine histograms."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = gold_buckets(gold)
    fig, axes = plt.subplots(3, len(spaces), figsize=(4.2 * len(spaces), 11), dpi=100, squeeze=False)
    for col, (name, x) in enumerate(spaces.items()):
        for row, how in enumerate(PROJECTIONS):
            xy = projected(x, how)
            ax = axes[row, col]
            dots = ax.scatter(xy[:, 0], xy[:, 1], c=colours, cmap="viridis", vmin=0, vmax=4, s=6, alpha=0.8)
            ax.set_title(f"{name}: {how}")
            ax.set_xticks([])
            ax.set_yticks([])
        cosines = random_pair_cosines(x, pairs=5000)
        hist = axes[2, col]
        hist.hist(cosines, bins=np.linspace(-1, 1, 81), density=True, alpha=0.8)
        hist.set_title(f"{name}\nrandom pairs: mean cosine {cosines.mean():.2f}", fontsize=9)
        hist.set_xlabel("cosine")
    bar = fig.colorbar(dots, ax=axes[:2, :].ravel().tolist(), shrink=0.6, ticks=range(5))
    bar.set_ticklabels(["gold 0-1", "1-2", "2-3", "3-4", "4-5"])
    fig.suptitle(title)
    fig.savefig(path)
    plt.close(fig)
    return path
