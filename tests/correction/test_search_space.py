"""The search space: the default without judgments, and a correction's own space when its artifact has one."""

from dataclasses import replace

import numpy as np

from app.correction import Correction
from app.correction.search_space import CONE_COSINE, SEARCH_W, default_search, raw_space


def test_the_default_searches_centred_vectors_raw_and_a_cone_in_the_similarity_space():
    centred = default_search("whitening", {"alpha": 0.2}, 8, CONE_COSINE / 2)
    assert centred.method == "none" and np.array_equal(centred.W, np.eye(8)) and not centred.mu.any()
    assert centred.describe()["shared_with_similarity"] is False
    cone = default_search("whitening", {"alpha": 0.2}, 8, CONE_COSINE * 3)
    assert cone.arrays == {} and cone.describe()["shared_with_similarity"] is True
    assert cone.describe()["method"] == "whitening"
    assert default_search("none", {}, 8, 0.0).arrays == {}  # nothing to undo


def test_a_correction_searches_in_its_own_space_when_the_artifact_has_one(artifact_factory, vectors):
    shared = artifact_factory(vectors, alpha=0.5, dim=4)
    plain = Correction(shared)
    assert plain.search is plain  # no map of its own: itself
    choice = raw_space(8, {"rule": "test"})
    own = replace(shared, arrays=choice.arrays, extra={"search": choice.describe()})
    correction = Correction(own)
    x = vectors[:5].astype(np.float32)
    assert correction.dim == 4 and correction.search.dim == 8
    np.testing.assert_allclose(correction.search.apply(x), x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-6)
    assert not np.allclose(correction.apply(x)[:, :4], correction.search.apply(x)[:, :4])
    assert correction.describe_search()["method"] == "none" and correction.describe_search()["dim"] == 8
    assert SEARCH_W in own.arrays
