"""What the offline commands share: a backbone that encodes a text once per command, tuning pairs only for `auto`,
judged sets encoded once and cached, and a fit here or on Ray."""

from __future__ import annotations

import pytest

from app.cli.offline import fit_here_or_on_ray, judged_sets, offline_backbone, tuning_pairs
from app.core.config import Settings
from app.offline.encoding import RememberingBackbone
from tests.conftest import CORPUS
from tests.offline.test_retrieval import write_collection


def test_tuning_pairs_only_for_auto_and_judged_sets_only_with_folders(tmp_path):
    settings = Settings(backbone="hashing", data_dir=tmp_path / "data")
    backbone = offline_backbone(settings)
    assert isinstance(backbone, RememberingBackbone)
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("\n".join(f"a cat {i}\ta dog {i}\t{i % 5}" for i in range(20)))
    assert tuning_pairs(backbone, "whitening", [pairs], False, settings) is None
    assert tuning_pairs(backbone, "auto", [pairs], True, settings) is None  # --no-tune
    assert tuning_pairs(backbone, "auto", [pairs], False, settings).left.shape == (20, backbone.dim)
    assert judged_sets(backbone, None, settings) is None
    docs = [{"_id": "0", "title": "", "text": "the cat sleeps"}, {"_id": "1", "title": "", "text": "a dog runs"}]
    folder = write_collection(tmp_path / "judged", docs, [{"_id": "q", "text": "cat"}], [("q", "0", 1)])
    (judged,) = judged_sets(backbone, [folder], settings)
    assert judged.name and list((tmp_path / "data" / "cache" / "retrieval").glob("*.npy"))


def test_a_fit_here_and_what_ray_cannot_fit(tmp_path):
    settings = Settings(backbone="hashing")
    backbone = offline_backbone(settings)
    artifact = fit_here_or_on_ray(settings, backbone, CORPUS, "whitening", {}, "corpus", None, "local", None, 1)
    assert artifact.method == "whitening"
    with pytest.raises(ValueError, match="use --engine local"):
        fit_here_or_on_ray(settings, backbone, CORPUS, "flow", {}, "corpus", None, "ray", None, 1)
