"""A 10M-document build's method at a small size: drawn a chunk at a time into the index, a float16 copy on disk
and the exact top-10, which the index then finds."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from app.benchmarks.streamed import scratch_dir, streamed_build
from app.benchmarks.synthetic import GaussianMixture


def test_the_index_built_in_chunks_finds_the_exact_top_10(tmp_path):
    rng = np.random.default_rng(0)
    data = np.vstack([c + 0.3 * rng.standard_normal((300, 16)) for c in rng.standard_normal((6, 16)) * 3])
    mixture = GaussianMixture.fit(data.astype(np.float32), components=6)
    asked = mixture.sample(20, seed=9)
    with scratch_dir(tmp_path) as folder:
        built = streamed_build(mixture, 3000, asked, factory="Flat", recall=0.95, work_dir=Path(folder), progress=False)
        assert built.stored.shape == (3000, 16) and built.stored.dtype == np.float16 and built.truth.shape == (20, 10)
        found = built.index.search(asked, 10, exact=built.exact)
        recall = np.mean([len({int(k) for k, _ in h} & set(t)) / 10 for h, t in zip(found, built.truth, strict=True)])
        assert recall >= 0.9  # an exact index on float32 draws, truth on the same draws: only float16 ties differ
        np.testing.assert_allclose(built.rows(np.array([5])), built.stored[5:6].astype(np.float32))
