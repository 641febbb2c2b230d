"""The filtered bench on a small synthetic index: each share's documents, recall against exact filtered search, and
its timings."""

import numpy as np

from app.benchmarks.filtered import SHARES, filtered_figures, tiers
from app.benchmarks.streamed import streamed_build
from app.benchmarks.synthetic import GaussianMixture


def test_tiers_let_each_share_through_by_list_membership():
    fields, draw = tiers(20_000, seed=1)
    assert len(fields.matching({"tier": "50%"})) == int((draw < 0.5).sum())
    assert fields.matching({"tier": "1%"}) == {str(i) for i in np.flatnonzero(draw < 0.01)}


def test_each_filter_finds_the_exact_filtered_top_ten(tmp_path):
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(2000, 16)).astype(np.float32)
    mixture = GaussianMixture.fit(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    asked = mixture.sample(30, seed=2)
    built = streamed_build(mixture, 30_000, asked, work_dir=tmp_path, factory="IVF64,Flat", recall=0.95, progress=False)
    figures = filtered_figures(built, asked)
    assert [f["filter"]["tier"] for f in figures] == list(SHARES)
    assert all(f["recall_at_10"] >= 0.95 for f in figures[:2]), figures
    assert figures[2]["documents"] < 20 and figures[2]["recall_at_10"] == 1.0  # a few documents: found exactly
    assert all(f["search_p50_ms"] > 0 and f["filter_p50_ms"] >= 0 for f in figures)
