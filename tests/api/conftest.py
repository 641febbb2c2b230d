"""Apps over real HTTP: the hashing backbone for the HTTP layer, the real model for quality."""

from __future__ import annotations

import pytest

from app.backbones import build_backbone
from app.correction.publication import write_artifact_file
from app.main import create_app
from app.offline.fit import fit_artifact
from tests.conftest import serve_app

CORPUS = [
    f"{a} {b} {c}"
    for a in ["the cat", "a dog", "my friend", "the plane", "a child", "the river"]
    for b in ["runs", "sleeps", "flies", "reads", "sings"]
    for c in ["at night", "in the park", "over the city", "with joy", "quietly"]
]


@pytest.fixture
def hashing_settings(make_settings, tmp_path):
    """Hashing backbone, with a whitening artifact for it bundled in a private models folder."""
    settings = make_settings(backbone="hashing", max_texts=8, max_text_chars=200, max_k=20)
    backbone = build_backbone(settings)
    artifact = fit_artifact(backbone, CORPUS, "whitening", {"alpha": 0.5, "dim": 8}, progress=False)
    write_artifact_file(artifact, settings.models_dir / "hashing.npz")
    return settings


@pytest.fixture
def client(hashing_settings):
    with serve_app(create_app(hashing_settings)) as c:
        yield c
