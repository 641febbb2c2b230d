"""Applying a correction to raw vectors: normalized, and the cone of cosines narrowed."""

import numpy as np

from app.correction import Correction
from tests.correction.test_methods import anisotropic, mean_pair_cosine


def test_correction_apply_normalizes_and_reduces_cone(artifact_factory):
    x = anisotropic() + 25.0  # a narrow cone
    raw_cos = mean_pair_cosine(x)
    art = artifact_factory(x, alpha=0.5)
    y = Correction(art).apply(x.astype(np.float32))
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), 1.0, atol=1e-5)
    assert raw_cos > 0.8
    assert abs(mean_pair_cosine(y)) < 0.05
    unnormalized = Correction(art).apply(x.astype(np.float32), normalize=False)
    np.testing.assert_allclose(unnormalized, (x - art.mu) @ art.W, rtol=1e-3, atol=1e-3)
