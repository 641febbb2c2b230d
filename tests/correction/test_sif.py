"""SIF: token weights by the formula, the first component removed, reweighted pooling in both backbones."""

from __future__ import annotations

import numpy as np
import pytest

from app.backbones.hashing import HashingBackbone
from app.correction.artifact import CorrectionArtifact
from app.correction.pipeline import Correction
from app.correction.sif import WEIGHTS_KEY, remove_first_component, sif_weights, token_counts
from app.offline.encoding import corrected_vectors
from app.offline.fit import fit_from_vectors
from tests.conftest import CORPUS


def test_weights_match_a_over_a_plus_p_on_a_toy_corpus():
    counts = token_counts([[0, 1, 1], [1, 2], [1]], vocab_size=4)  # 6 tokens: p = 1/6, 4/6, 1/6, 0
    np.testing.assert_array_equal(counts, [1, 4, 1, 0])
    a = 0.1
    np.testing.assert_allclose(sif_weights(counts, a), [a / (a + 1 / 6), a / (a + 4 / 6), a / (a + 1 / 6), 1.0])
    assert sif_weights(counts, a)[1] < sif_weights(counts, a)[0] < sif_weights(counts, a)[3]  # frequent weighs less
    with pytest.raises(ValueError, match="positive"):
        sif_weights(counts, 0.0)


def test_the_first_principal_component_is_removed():
    rng = np.random.default_rng(0)
    common = rng.standard_normal(16)
    x = rng.standard_normal((300, 16)) * 0.3 + rng.uniform(1, 3, (300, 1)) * common
    mu, W = remove_first_component(x)
    y = (x - mu) @ W
    u = common / np.linalg.norm(common)
    assert np.abs(y @ u).max() < 0.2 * np.abs(x @ u).min()  # the common direction is gone from y
    np.testing.assert_allclose(W @ W, W, atol=1e-10)  # a projection


def test_reweighted_pooling_in_the_hashing_backbone():
    backbone = HashingBackbone(dim=16)
    ones = np.ones(backbone.vocab_size, dtype=np.float32)
    np.testing.assert_allclose(backbone.encode(["the cat runs"], ones), backbone.encode(["the cat runs"]), atol=1e-6)
    zero_the = ones.copy()
    zero_the[backbone.token_ids(["the"])[0][0]] = 0.0
    only_cat_runs = backbone.encode(["the cat runs"], zero_the) * 3 / 2  # a sum over the count, "the" weighs 0
    np.testing.assert_allclose(only_cat_runs, backbone.encode(["cat runs"]) + backbone._bias / 2, atol=1e-5)


def test_a_sif_artifact_stores_its_weights_and_corrects_reweighted_vectors():
    backbone = HashingBackbone(dim=16)
    artifact = fit_from_vectors(backbone, CORPUS, backbone.encode(CORPUS), "sif", {"a": 1e-2}, progress=False)
    assert artifact.method == "sif" and artifact.params == {"a": 1e-2}
    iso = artifact.extra["isotropy"]  # raw: the backbone's own vectors; corrected: reweighted, component removed
    assert iso["corrected"]["mean_random_cosine"] < iso["raw"]["mean_random_cosine"]
    weights = artifact.arrays[WEIGHTS_KEY]
    assert weights.shape == (backbone.vocab_size,)
    the = backbone.token_ids(["the"])[0][0]
    assert weights[the] < weights[backbone.token_ids(["river"])[0][0]] < 1.0  # "the" is in a third of CORPUS
    again = Correction(CorrectionArtifact.from_bytes(artifact.to_bytes()))
    np.testing.assert_array_equal(again.token_weights, weights)
    got = corrected_vectors(backbone, again, ["the cat runs"], progress=False)
    want = Correction(artifact).apply(backbone.encode(["the cat runs"], weights))
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert not np.allclose(got, Correction(artifact).apply(backbone.encode(["the cat runs"])), atol=1e-3)


def test_sif_refuses_a_pooling_it_cannot_reweight():
    with pytest.raises(ValueError, match="mean or embedding_avg"):
        fit_from_vectors(HashingBackbone(dim=16, pooling="cls"), CORPUS, np.empty((0, 16)), "sif", {}, progress=False)
