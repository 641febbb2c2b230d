import numpy as np
import pytest

from app.correction import CorrectionArtifact, CovarianceStats, fit_correction
from app.correction.artifact import BackboneRef, CorpusRef


@pytest.fixture
def artifact_factory():
    """Fit a whitening artifact on given vectors, for a made-up backbone of matching dim."""

    def make(x, fingerprint="fp-test", **params) -> CorrectionArtifact:
        d = x.shape[1]
        mu, w = fit_correction(CovarianceStats(d).update(x), "whitening", **params)
        return CorrectionArtifact.create(
            method="whitening",
            params=params,
            backbone=BackboneRef(name="test", fingerprint=fingerprint, dim=d, pooling="mean"),
            corpus=CorpusRef(size=len(x), sha256="0" * 64),
            mu=mu,
            W=w,
        )

    return make


@pytest.fixture
def vectors():
    return np.random.default_rng(0).standard_normal((200, 8)) + 2.0
