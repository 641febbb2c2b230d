"""A collection's scale of cosines: measured on a fixed sample, read as a confidence, measured again when it grows."""

import numpy as np
import pytest

from app.index.dense_scale import DenseScale, measure, sample_keys
from app.index.faiss_index import VectorIndex
from app.index.fusion import CANDIDATES
from app.index.passages import passage_key


def test_confidence_reads_a_cosine_against_the_range():
    scale = DenseScale(low=0.3, high=0.7, vectors=100)
    assert [scale.confidence(c) for c in (0.1, 0.3, 0.5, 0.7, 0.95)] == pytest.approx([0, 0, 0.5, 1, 1])
    assert DenseScale(0.5, 0.5, 10).confidence(0.1) == 1.0  # no range: no judgement
    assert not scale.stale(120) and scale.stale(126) and scale.stale(74)


def test_every_replica_samples_the_same_first_passages():
    keys = [f"d{i:03d}" for i in range(500)] + [passage_key("d001", 1)]
    sample = sample_keys(list(reversed(keys)), n=10)
    assert sample == sample_keys(keys, n=10) and len(sample) == 10
    assert all("\x1f" not in k for k in sample)


def test_measure_finds_the_nearest_and_the_candidates_th_other_document():
    rng = np.random.default_rng(0)
    n, dim = CANDIDATES + 50, 16
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    keys = [f"d{i:04d}" for i in range(n)]
    index = VectorIndex(dim, "Flat")
    index.upsert(keys, vectors)
    row = {k: i for i, k in enumerate(keys)}
    scale = measure(index, lambda ks: vectors[[row[k] for k in ks]])
    cosines = vectors @ vectors.T
    np.fill_diagonal(cosines, -np.inf)
    ordered = -np.sort(-cosines, axis=1)
    sample = [row[k] for k in sample_keys(keys)]
    assert scale.high == pytest.approx(np.median(ordered[sample, 0]), abs=1e-5)
    assert scale.low == pytest.approx(np.median(ordered[sample, CANDIDATES - 1]), abs=1e-5)
    assert measure(VectorIndex(dim, "Flat"), lambda ks: vectors[:0]) is None
    assert scale.vectors == n
