"""A model folder's backbone: what it says of itself, and what start-up would refuse, found without loading it."""

import json
import shutil

import pytest

from app.backbones.architecture import FolderRefused
from app.backbones.hashing import HashingBackbone
from app.backbones.local import check_model, model_description
from app.benchmarks.model_folders import Recipe, build
from app.core.config import Settings


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return build(Recipe("albert", "mean", False, False, 128), tmp_path_factory.mktemp("albert"))


def test_check_model_passes_a_good_folder_and_names_what_is_wrong(folder, tmp_path):
    check_model(Settings(model_path=folder))
    check_model(Settings())  # the bundled all-MiniLM-L6-v2
    broken = shutil.copytree(folder, tmp_path / "broken")
    (broken / "modules.json").write_text(json.dumps([{"type": "x.Router", "path": "r"}]))
    with pytest.raises(FolderRefused, match="module 'x.Router'"):
        check_model(Settings(model_path=broken))
    with pytest.raises(FolderRefused, match="CE_MAX_LENGTH=1000 exceeds broken"):
        shutil.copy(folder / "modules.json", broken / "modules.json")
        check_model(Settings(model_path=broken, max_length=1000))


def test_an_explicit_pooling_runs_on_any_architecture_and_says_where_it_came_from(folder):
    from app.backbones.huggingface import HuggingFaceBackbone

    backbone = HuggingFaceBackbone(folder, pooling="embedding_avg")  # ALBERT's: its embeddings mapped to 32 wide
    assert backbone.encode(["a text"]).shape == (1, 32) and backbone.dim == 32
    assert model_description(backbone)["sources"]["pooling"] == "CE_POOLING"


def test_a_weight_free_backbone_describes_its_pooling_and_no_prompts():
    described = model_description(HashingBackbone())
    assert described["pooling"] == "mean" and described["prompts"] == {} and described["query"] == ""


def test_a_plain_folder_knows_the_fingerprint_its_name_gave_it_before(tiny_bert):
    """What the folder-named fingerprint was (model, weights, pooling, length): where its documents were kept."""
    from app.backbones.base import make_fingerprint
    from app.backbones.huggingface import HuggingFaceBackbone
    from app.backbones.tokens import hash_weights

    backbone = HuggingFaceBackbone(tiny_bert, pooling="mean", max_length=32)
    before = make_fingerprint(model=tiny_bert.name, weights=hash_weights(tiny_bert), pooling="mean", max_length=32)
    assert backbone.legacy_fingerprint == before != backbone.fingerprint


def test_a_folder_with_heads_or_prompts_has_no_earlier_fingerprint(folder):
    from app.backbones.huggingface import HuggingFaceBackbone

    assert HuggingFaceBackbone(folder).legacy_fingerprint is None  # its prompts change its vectors: nothing to reuse
