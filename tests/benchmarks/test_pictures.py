"""Pictures of spaces are drawn from the vectors they claim: a rank-one cloud is a line raw, not corrected."""

from __future__ import annotations

import numpy as np
import pytest

from app.benchmarks.pictures import GOLD_NAMES, TOP_VALUES, field_labels, gold_buckets, plot_spaces, projected
from app.correction import Correction


def rank_one_cloud(n: int = 300, dim: int = 16) -> np.ndarray:
    """Points along one direction (both ways), with a whisper of noise in every other."""
    rng = np.random.default_rng(0)
    u = rng.standard_normal(dim)
    return rng.standard_normal((n, 1)) * u + 1e-3 * rng.standard_normal((n, dim))


def spread(xy: np.ndarray) -> float:
    """How far from a line a 2-D picture is: its second axis's spread over its first's."""
    s = np.linalg.svd(xy - xy.mean(0), compute_uv=False)
    return float(s[1] / s[0])


def test_the_corrected_picture_of_a_rank_one_cloud_is_not_a_line(artifact_factory, tmp_path):
    raw = rank_one_cloud()
    corrected = Correction(artifact_factory(raw, alpha=0.5)).apply(raw)  # full whitening, fitted on the cloud
    assert spread(projected(raw, "PCA")) < 0.05  # a line: every point is near +u or -u
    assert spread(projected(corrected, "PCA")) > 0.5  # whitened: the noise dims weigh as much as u
    assert spread(projected(corrected, "t-SNE")) > 0.3
    gold = np.linspace(0, 5, 150)
    assert gold_buckets(gold).tolist()[:150:30] == [0, 1, 2, 3, 4] and len(gold_buckets(gold)) == 300
    drawn = {"raw": raw, "corrected": corrected}
    path = plot_spaces(tmp_path / "spaces.png", drawn, gold_buckets(gold), GOLD_NAMES, "a rank-one cloud", ordered=True)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 20_000


def test_a_metadata_field_colours_its_most_common_values_and_lumps_the_rest():
    values = ["news"] * 5 + ["blog"] * 3 + [f"rare{i}" for i in range(TOP_VALUES)] + [None, 7]
    labels, names = field_labels(values)
    assert names[:2] == ["news", "blog"] and names[-2:] == ["other", "(none)"] and len(names) == TOP_VALUES + 2
    # ties go by value, so 7 (as "7") keeps a colour and the last of the rare ones share "other"
    assert [names[i] for i in labels[[0, 5, 8, 15, -2, -1]]] == ["news", "blog", "rare0", "other", "(none)", "7"]
    assert field_labels(["a", "b", "a"]) == (pytest.approx([0, 1, 0]), ["a", "b"])  # nothing lumped, none missing
