"""The mixture the 10M-document benchmarks sample from: fitted on clustered vectors, unit samples, chunked alike."""

from __future__ import annotations

import numpy as np

from app.benchmarks.synthetic import GaussianMixture


def test_samples_are_unit_vectors_near_the_fitted_clusters_and_chunks_change_nothing():
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((4, 16)) * 3
    data = np.vstack([c + rng.standard_normal((200, 16)) * 0.3 for c in centers]).astype(np.float32)
    mixture = GaussianMixture.fit(data, components=4)
    assert mixture.dim == 16 and np.isclose(mixture.weights.sum(), 1.0)
    sample = mixture.sample(500, seed=1)
    np.testing.assert_allclose(np.linalg.norm(sample, axis=1), 1.0, atol=1e-5)
    unit_centers = centers / np.linalg.norm(centers, axis=1, keepdims=True)
    assert np.median((sample @ unit_centers.T).max(axis=1)) > 0.9  # each sample lies by one of the clusters
    in_chunks = np.vstack(list(mixture.chunks(500, seed=1, chunk=128)))
    np.testing.assert_allclose(in_chunks, mixture.sample(500, seed=1, chunk=128))  # held whole or a chunk at a time
