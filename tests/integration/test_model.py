"""The API with the real all-MiniLM-L6-v2 and its bundled correction: what users actually get."""

import numpy as np
import pytest

from app.core.config import MODELS_DIR
from app.core.errors import ArtifactError
from app.correction.publication import write_artifact_file
from app.main import create_app
from app.offline.fit import fit_artifact
from app.services.container import Services
from tests.conftest import serve_app

pytestmark = pytest.mark.model

DOCS = [
    {"id": "guitar", "text": "A man is playing a guitar on stage."},
    {"id": "cook", "text": "A woman is slicing onions in the kitchen."},
    {"id": "market", "text": "Stock markets fell sharply after the announcement."},
    {"id": "dog", "text": "A dog is running across the field."},
    {"id": "rain", "text": "Heavy rain is expected across the region tomorrow."},
]


@pytest.fixture(scope="module")
def model_client(redis_url, tmp_path_factory, minilm):
    from app.core.config import Settings

    settings = Settings(
        redis_url=redis_url,
        key_prefix="test-model",
        models_dir=MODELS_DIR,
        data_dir=tmp_path_factory.mktemp("data"),
    )
    service = Services.from_settings(settings, backbone=minilm)
    with serve_app(create_app(settings, services=service)) as client:
        yield client
    service.store.client.flushdb()
    service.close()


def test_bundled_correction_is_served(model_client):
    info = model_client.get("/info").json()
    assert info["backbone"]["name"] == "all-MiniLM-L6-v2" and info["backbone"]["pooling"] == "mean"
    correction = info["correction"]
    assert correction["method"] == "whitening"
    assert correction["params"] == {"alpha": 0.1, "dim": 256, "eps": 0.0, "drop": 1}
    # How it was chosen, and what it does to the space, travel with the artifact.
    selection = correction["extra"]["selection"]
    assert selection["tuned_on"] == "sts-train.csv+sts-dev.csv" and selection["score"] > selection["raw_score"]
    iso = correction["extra"]["isotropy"]
    assert iso["raw"]["mean_random_cosine"] > iso["corrected"]["mean_random_cosine"]
    assert iso["corrected"]["isoscore"] > iso["raw"]["isoscore"]
    assert info["correction"]["corpus"]["size"] == 11498  # both sentences of every STS-B train pair
    assert info["dim"] == 256


def test_embed_dims_and_unit_norm(model_client):
    body = model_client.post("/embed", json={"texts": ["hello world", "a second, longer sentence."]}).json()
    vectors = np.array(body["embeddings"])
    assert vectors.shape == (2, 256) and body["dim"] == 256
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_paraphrase_scores_above_unrelated(model_client):
    r = model_client.post(
        "/similarity",
        json={
            "source": "A man is playing a guitar.",
            "targets": ["Someone plays the guitar.", "The stock market crashed today."],
            "compare_raw": True,
        },
    ).json()
    paraphrase, unrelated = r["scores"]
    assert paraphrase > 0.6 and unrelated < 0.2 and paraphrase - unrelated > 0.5
    assert r["raw_scores"][0] > r["raw_scores"][1]


def test_search_returns_the_expected_document_first(model_client):
    assert model_client.post("/documents", json={"documents": DOCS}).status_code == 201
    for query, expected in [
        ("someone strumming an instrument", "guitar"),
        ("chopping vegetables", "cook"),
        ("the weather forecast says it will pour", "rain"),
        ("a puppy sprinting on the grass", "dog"),
    ]:
        results = model_client.get("/search", params={"q": query, "k": 3}).json()["results"]
        assert results[0]["id"] == expected, (query, results)
        assert results[0]["score"] > results[1]["score"]


def test_a_mismatched_artifact_is_refused_at_start_up(make_settings, minilm, tmp_path):
    """An artifact fitted with another pooling must not be applied to mean-pooled vectors."""
    from app.backbones.huggingface import HuggingFaceBackbone, default_model_path

    cls_backbone = HuggingFaceBackbone(default_model_path(), name=minilm.name, pooling="cls")
    artifact = fit_artifact(
        cls_backbone,
        [f"sentence number {i} about topic {i % 7}" for i in range(600)],
        "whitening",
        {"alpha": 0.5, "dim": 64},
        progress=False,
    )
    path = write_artifact_file(artifact, tmp_path / "cls.npz")
    with pytest.raises(ArtifactError, match="fitted on backbone all-MiniLM-L6-v2/cls"):
        Services.from_settings(make_settings(correction=str(path)), backbone=minilm)
