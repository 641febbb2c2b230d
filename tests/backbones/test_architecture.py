"""Every served encoder architecture, as a sentence-transformers folder a user brings, gives sentence-transformers'
own vectors on torch and on ONNX Runtime; a folder that is no encoder, or too long for its positions, is refused."""

import json

import numpy as np
import pytest

from app.backbones import build_backbone
from app.backbones.architecture import ENCODERS, FolderRefused, read_architecture, served_length
from app.backbones.int8_check import MIN_CENTRED_COSINE
from app.backbones.prompts import prompted
from app.benchmarks.model_folders import RECIPES, build, texts
from app.core.config import Settings

FP32_AGREEMENT = 0.99999
INT8_FALLS_SHORT = {"electra"}  # its random tiny weights: int8's centred cosine is far below the bar (the table)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("st-folders")
    return {recipe.architecture: build(recipe, root) for recipe in RECIPES}


def _cosines(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    ours = ours / np.linalg.norm(ours, axis=1, keepdims=True)
    return np.einsum("ij,ij->i", ours, theirs / np.linalg.norm(theirs, axis=1, keepdims=True))


def test_the_recipes_cover_every_common_encoder():
    assert {r.architecture for r in RECIPES} == set(ENCODERS)
    assert {r.pooling for r in RECIPES} == {"cls", "mean", "max"} and {r.max_length for r in RECIPES} == {128, 512}


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda r: r.architecture)
def test_each_architecture_serves_sentence_transformers_vectors(recipe, folders, tmp_path):
    """No setting but the folder: its pooling, heads, length and prompts, on torch, ONNX fp32 and the default."""
    from sentence_transformers import SentenceTransformer

    folder, batch = folders[recipe.architecture], texts()
    reference = SentenceTransformer(str(folder))
    backbones = {
        "torch": build_backbone(Settings(backbone="huggingface", model_path=folder)),
        "fp32": build_backbone(Settings(model_path=folder, quantize="none", data_dir=tmp_path)),
        "default": build_backbone(Settings(model_path=folder, data_dir=tmp_path)),
    }
    for prompt_name in ("query", "document"):
        theirs = reference.encode(batch, prompt_name=prompt_name)
        for kind, backbone in backbones.items():
            assert backbone.max_length == recipe.max_length and backbone.dim == theirs.shape[1]
            ours = backbone.encode(prompted(backbone.prompts.text(prompt_name), batch))
            lowest = _cosines(ours, theirs).min()
            assert lowest >= (FP32_AGREEMENT if kind != "default" else 0.99), (kind, prompt_name, lowest)
    check = backbones["default"].int8_check
    assert check is not None and check.keeps == (recipe.architecture not in INT8_FALLS_SHORT)
    assert backbones["default"].runtime == ("onnxruntime-int8" if check.keeps else "onnxruntime-fp32")
    assert check.keeps == (check.lowest_cosine >= MIN_CENTRED_COSINE)


def test_a_renamed_copy_is_the_same_backbone_and_a_changed_head_is_not(folders, tmp_path):
    import shutil

    source = folders["bert"]
    copy = shutil.copytree(source, tmp_path / "renamed")
    first = build_backbone(Settings(backbone="huggingface", model_path=source))
    assert build_backbone(Settings(backbone="huggingface", model_path=copy)).fingerprint == first.fingerprint
    config = json.loads((copy / "config_sentence_transformers.json").read_text())
    (copy / "config_sentence_transformers.json").write_text(json.dumps({**config, "prompts": {"query": "q: "}}))
    changed = build_backbone(Settings(backbone="huggingface", model_path=copy))
    assert changed.fingerprint != first.fingerprint and changed.fingerprint_parts["prompts"] == {"query": "q: "}


def test_an_explicit_pooling_or_length_overrides_the_folder_and_says_so(folders):
    folder = folders["distilbert"]  # mean pooling, 512 tokens in its folder
    backbone = build_backbone(Settings(backbone="huggingface", model_path=folder, pooling="cls", max_length=64))
    assert (backbone.pooling, backbone.max_length) == ("cls", 64)
    assert backbone.sources == {"pooling": "CE_POOLING", "max_length": "CE_MAX_LENGTH"}
    plain = build_backbone(Settings(backbone="huggingface", model_path=folder))
    assert plain.sources == {"pooling": "1_Pooling/config.json", "max_length": "the folder"}


def test_a_decoder_is_refused_by_its_type(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_embd": 32, "vocab_size": 50}))
    with pytest.raises(FolderRefused, match="model type 'gpt2' is not an encoder"):
        read_architecture(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "is_decoder": True}))
    with pytest.raises(FolderRefused, match="not an encoder"):
        read_architecture(tmp_path)


def test_positions_count_the_padding_offset_and_a_longer_limit_is_refused(folders):
    assert read_architecture(folders["roberta"]).positions == 513  # 514, after pad id 0
    assert read_architecture(folders["bert"]).positions == 514
    with pytest.raises(FolderRefused, match="CE_MAX_LENGTH=1024 exceeds x's 513 positions"):
        served_length(None, 1024, 256, 513, "x")
    assert served_length(None, None, 256, 128, "x") == 128  # the default, cut to what the model holds
    assert served_length(512, None, 256, 513, "x") == 512
