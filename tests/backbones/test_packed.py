"""Packed execution (no padding) gives what the model's own padded forward gives."""

import numpy as np
import pytest

from app.backbones.huggingface import HuggingFaceBackbone, default_model_path
from app.core.names import Pooling

WORDS = "the a cat dog sat on mat sun rain plane flies runs fast slow red blue green house tree".split()


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
