"""Flow and SIF artifacts served over real HTTP like any other: same vectors as offline, search on them."""

from __future__ import annotations

import numpy as np
import pytest

from app.backbones import build_backbone
from app.core.stored_vectors import COSINE_ERROR, from_stored, to_stored
from app.correction import Correction, CorrectionArtifact
from app.correction.publication import write_artifact_file
from app.correction.search_space import raw_space
from app.main import create_app
from app.offline.encoding import corrected_vectors
from app.offline.fit import fit_artifact
from tests.conftest import CORPUS, serve_app

DOCS = ["the cat sleeps in the park", "the plane flies over the city", "a child reads with joy at night"]


@pytest.fixture(params=["sif", "flow"])
def served(request, make_settings):
    """The hashing backbone with a SIF or flow artifact bundled, and that artifact."""
    settings = make_settings(backbone="hashing", max_texts=8, max_text_chars=200, max_k=20)
    backbone = build_backbone(settings)
    params = {"a": 1e-2} if request.param == "sif" else {"blocks": 2, "hidden": 16, "max_seconds": 5}
    artifact = fit_artifact(backbone, CORPUS, request.param, params, progress=False)
    write_artifact_file(artifact, settings.models_dir / "hashing.npz")
    return settings, backbone, Correction(artifact)


def as_stored(backbone, correction, texts):
    """Documents as search scores them: their raw vectors as Redis keeps them (float16), corrected; a correction
    that pools its own way (SIF) encodes the texts again, so for it nothing is rounded."""
    if correction.token_weights is not None:
        return corrected_vectors(backbone, correction, texts, progress=False)
    return correction.apply(from_stored([to_stored(backbone.encode(texts))[0]], ["float16"], backbone.dim))


def test_embed_similarity_and_search_use_the_served_correction(served):
    settings, backbone, correction = served
    want = corrected_vectors(backbone, correction, DOCS, progress=False)
    with serve_app(create_app(settings)) as c:
        info = c.get("/info").json()["correction"]
        assert info["id"] == correction.id and info["method"] == correction.artifact.method
        body = c.post("/embed", json={"texts": DOCS}).json()
        assert body["correction"] == correction.id
        np.testing.assert_allclose(body["embeddings"], want, atol=1e-5)
        sim = c.post("/similarity", json={"pairs": [[DOCS[0], DOCS[1]]], "compare_raw": True}).json()
        assert sim["scores"][0] == pytest.approx(float(want[0] @ want[1]), abs=1e-5)
        raw = backbone.encode(DOCS[:2])
        raw_cos = raw[0] @ raw[1] / np.linalg.norm(raw[0]) / np.linalg.norm(raw[1])
        assert sim["raw_scores"][0] == pytest.approx(float(raw_cos), abs=1e-5)  # raw stays the backbone's own
        encoded = c.get("/info").json()["engine"]["texts_encoded"]
        plain = c.post("/similarity", json={"pairs": [[DOCS[0], DOCS[2]]]}).json()
        assert "raw_scores" not in plain and plain["scores"][0] == pytest.approx(float(want[0] @ want[2]), abs=1e-5)
        assert c.get("/info").json()["engine"]["texts_encoded"] - encoded == 2  # SIF too: no raw pass unasked
        documents = [{"id": f"d{i}", "text": t} for i, t in enumerate(DOCS)]
        assert c.post("/documents", json={"documents": documents}).status_code == 201
        hits = c.get("/search", params={"q": DOCS[2], "k": 3}).json()["results"]
        stored = as_stored(backbone, correction, DOCS)
        assert hits[0]["id"] == "d2" and hits[0]["score"] == pytest.approx(1.0, abs=COSINE_ERROR)
        expected = sorted((stored @ want[2]).tolist(), reverse=True)[:3]
        assert [h["score"] for h in hits] == pytest.approx(expected, abs=1e-5)


def test_after_a_restart_the_index_is_rebuilt_in_the_served_space(served):
    settings, backbone, correction = served
    want = corrected_vectors(backbone, correction, DOCS, progress=False)
    with serve_app(create_app(settings)) as c:
        c.post("/documents", json={"documents": [{"id": f"d{i}", "text": t} for i, t in enumerate(DOCS)]})
    for snapshot in (settings.data_dir / "index").glob("*.npz"):
        snapshot.unlink()  # no snapshot: the index is built again from what Redis holds
    with serve_app(create_app(settings)) as c:
        # Dense alone: the cosines' order is the index's (hybrid reorders by the lexical list too).
        hits = c.get("/search", params={"q": DOCS[0], "k": 3, "mode": "dense"}).json()["results"]
        stored = as_stored(backbone, correction, DOCS)
        expected = sorted((stored @ want[0]).tolist(), reverse=True)[:3]
        assert [h["score"] for h in hits] == pytest.approx(expected, abs=1e-5)


def test_a_pinned_file_serves_this_process_and_moves_no_one_else(hashing_settings, store, tmp_path):
    from app.services.container import Services

    published = Services.from_settings(hashing_settings)  # auto: publishes the bundled whitening as current
    current = published.correction.id
    published.close()
    other = fit_artifact(build_backbone(hashing_settings), CORPUS, "center", {}, progress=False)
    pinned = write_artifact_file(other, tmp_path / "pinned.npz")
    services = [Services.from_settings(hashing_settings.model_copy(update={"correction": str(pinned)}))]
    try:
        assert services[0].correction.id == other.id
        assert store.artifacts.current_id(other.backbone.fingerprint) == current
        services.append(Services.from_settings(hashing_settings))  # a replica following Redis
        assert services[1].correction.id == current
    finally:
        for s in services:
            s.close()


def test_search_runs_in_the_artifacts_own_search_space_and_says_so(make_settings):
    settings = make_settings(backbone="hashing", max_texts=8, max_text_chars=200, max_k=20)
    backbone = build_backbone(settings)
    fitted = fit_artifact(backbone, CORPUS, "whitening", {"alpha": 0.5, "dim": 8}, progress=False)
    search = raw_space(backbone.dim, {"rule": "test: the backbone's own vectors"})
    artifact = CorrectionArtifact.create(
        method=fitted.method,
        params=fitted.params,
        backbone=fitted.backbone,
        corpus=fitted.corpus,
        mu=fitted.mu,
        W=fitted.W,
        arrays=search.arrays,
        extra={"search": search.describe()},
    )
    write_artifact_file(artifact, settings.models_dir / "hashing.npz")
    raw = backbone.encode(DOCS)
    raw = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    similar = corrected_vectors(backbone, Correction(artifact), DOCS, progress=False)
    with serve_app(create_app(settings)) as c:
        info = c.get("/info").json()
        assert info["dim"] == 8 and info["correction"]["id"] == artifact.id
        space = {"shared_with_similarity": False, "method": "none", "dim": backbone.dim}
        assert space.items() <= info["search_space"].items() and info["search_space"]["correction"] == artifact.id
        assert info["index"]["dim"] == backbone.dim
        assert c.post("/embed", json={"texts": DOCS[:1]}).json()["embeddings"][0] == pytest.approx(similar[0], abs=1e-5)
        c.post("/documents", json={"documents": [{"id": f"d{i}", "text": t} for i, t in enumerate(DOCS)]})
        found = c.post("/search", json={"q": DOCS[2], "k": 3}).json()
        assert space.items() <= found["search_space"].items() and found["correction"] == artifact.id
        assert found["search_space"]["rule"] == "test: the backbone's own vectors"
        assert [h["score"] for h in found["results"]] == pytest.approx(sorted(raw @ raw[2], reverse=True), abs=1e-5)
        sim = c.post("/similarity", json={"pairs": [[DOCS[2], DOCS[0]]], "compare_raw": True}).json()
        d0 = next(h["score"] for h in found["results"] if h["id"] == "d0")
        assert sim["raw_scores"][0] == pytest.approx(d0, abs=1e-5)  # search scores are raw cosines here
        assert sim["scores"][0] == pytest.approx(float(similar[2] @ similar[0]), abs=1e-5)
        assert abs(sim["scores"][0] - d0) > 0.05  # while /similarity serves the corrected space
