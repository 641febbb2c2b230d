"""Fitting offline: an artifact tied to the backbone that made its vectors, and SIF only where tokens are averaged."""

from __future__ import annotations

import numpy as np
import pytest

from app.backbones.hashing import HashingBackbone
from app.correction import Correction, CovarianceStats
from app.offline.fit import ISOTROPY_SAMPLE, applies_to, corpus_ref, fit_artifact, fit_from_stats, sample_rows
from tests.conftest import CORPUS


def test_an_artifact_names_its_backbone_and_corpus_and_whitens_its_vectors():
    backbone = HashingBackbone(dim=8)
    artifact = fit_artifact(backbone, CORPUS, "whitening", {"alpha": 1.0}, progress=False)
    assert artifact.method == "whitening" and artifact.backbone.fingerprint == backbone.fingerprint
    assert artifact.corpus.size == len(CORPUS)
    corrected = Correction(artifact).apply(backbone.encode(CORPUS), normalize=False)
    cov = np.cov(corrected, rowvar=False, bias=True)
    off_diagonal = cov - np.diag(np.diag(cov))
    assert np.abs(off_diagonal).max() < 1e-6 * np.diag(cov).max()  # decorrelated: the corpus's axes are whitened


@pytest.mark.parametrize(
    ("method", "pooling", "applies"),
    [("sif", "mean", True), ("sif", "embedding_avg", True), ("sif", "cls", False), ("whitening", "cls", True)],
)
def test_sif_applies_only_to_token_averages(method, pooling, applies):
    assert applies_to(method, pooling) is applies


def test_a_sample_is_of_the_rows_and_all_of_them_below_the_limit():
    x = np.arange(100.0).reshape(50, 2)
    assert sample_rows(x, 100) is x or np.array_equal(sample_rows(x, 100), x)
    sample = sample_rows(x, 10)
    assert sample.shape == (10, 2) and {tuple(r) for r in sample} <= {tuple(r) for r in x}


def test_statistics_reduced_from_parts_fit_the_artifact_one_process_fits():
    backbone = HashingBackbone(dim=8)
    vectors = backbone.encode(CORPUS)
    local = fit_artifact(backbone, CORPUS, "whitening", {"alpha": 1.0}, source="toy", progress=False)
    halves = [CovarianceStats(8).update(part) for part in (vectors[:5], vectors[5:])]
    reduced = halves[0].merge(halves[1])
    corpus = corpus_ref(CORPUS, "toy")
    distributed = fit_from_stats(
        backbone, corpus, reduced, sample_rows(vectors, ISOTROPY_SAMPLE), "whitening", {"alpha": 1.0}
    )
    assert distributed.id == local.id and distributed.corpus == local.corpus == corpus
    assert corpus.size == len(CORPUS) and corpus.source == "toy"
