"""A sentence-transformers folder is read as sentence-transformers reads it; what the service cannot run is refused
at start, in one line that names it."""

import json
import subprocess
import sys

import numpy as np
import pytest

from app.backbones.architecture import FolderRefused
from app.backbones.folder import apply_heads, read_folder
from app.backbones.heads import Dense
from app.benchmarks.model_folders import Recipe, build
from app.core.names import Pooling


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return build(Recipe("bert", "max", True, True, 128), tmp_path_factory.mktemp("st"))


def test_modules_pooling_heads_length_and_prompts_are_read(folder):
    read = read_folder(folder)
    assert read.weights == folder and read.pooling == Pooling.MAX and read.max_length == 128
    assert [type(h) for h in read.heads] == [Dense] and read.normalized and read.dim == 16
    assert read.prompts.query == "query: " and read.prompts.document == "passage: "


def test_the_heads_match_sentence_transformers_own(folder):
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder))
    pooled = np.random.default_rng(0).normal(size=(5, 32)).astype(np.float32)
    with torch.no_grad():
        theirs = model[2]({"sentence_embedding": torch.from_numpy(pooled)})["sentence_embedding"].numpy()
    np.testing.assert_allclose(apply_heads(read_folder(folder), pooled), theirs, rtol=1e-5, atol=1e-6)


def test_a_plain_hugging_face_folder_has_nothing_of_its_own(folder):
    plain = read_folder(folder.parent / "bert-weights")
    assert plain.pooling is None and plain.heads == () and not plain.sentence_transformers


def test_an_unknown_module_a_concatenated_pooling_and_no_pooling_are_refused(folder, tmp_path):
    import shutil

    copy = shutil.copytree(folder, tmp_path / "copy")
    modules = json.loads((copy / "modules.json").read_text())
    lstm = {"idx": 9, "name": "9", "path": "9_LSTM", "type": "sentence_transformers.models.LSTM"}
    (copy / "modules.json").write_text(json.dumps([*modules, lstm]))
    with pytest.raises(FolderRefused, match="module 'sentence_transformers.models.LSTM' .9_LSTM. is not one"):
        read_folder(copy)
    (copy / "modules.json").write_text(json.dumps(modules[:1]))
    with pytest.raises(FolderRefused, match="no Pooling module"):
        read_folder(copy)
    (copy / "modules.json").write_text(json.dumps(modules))
    (copy / "1_Pooling/config.json").write_text(json.dumps({"pooling_mode": ["cls", "mean"]}))
    with pytest.raises(FolderRefused, match="pooling .* is not served"):
        read_folder(copy)


@pytest.mark.process
@pytest.mark.parametrize("damage", ["tokenizer", "weights", "decoder", "length"])
def test_serve_refuses_a_folder_in_one_line(folder, tmp_path, damage):
    """What a user's folder lacks stops `serve` before it starts: exit 2 and one line, no traceback."""
    import os
    import shutil

    copy = shutil.copytree(folder, tmp_path / "copy")
    env = {**os.environ, "CE_MODEL_PATH": str(copy), "CE_DATA_DIR": str(tmp_path / "data")}
    expected = {
        "tokenizer": "has no tokenizer.json",
        "weights": "cannot be read",
        "decoder": "is not an encoder",
        "length": "CE_MAX_LENGTH=600 exceeds",
    }[damage]
    if damage == "tokenizer":
        (copy / "tokenizer.json").unlink()
    elif damage == "weights":
        data = (copy / "model.safetensors").read_bytes()
        (copy / "model.safetensors").write_bytes(data[: len(data) // 2])
    elif damage == "decoder":
        config = json.loads((copy / "config.json").read_text())
        (copy / "config.json").write_text(json.dumps({**config, "model_type": "gpt2"}))
    else:
        env["CE_MAX_LENGTH"] = "600"
    done = subprocess.run([sys.executable, "-m", "app", "serve"], env=env, capture_output=True, text=True, timeout=120)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and expected in lines[0], done.stderr
