"""The poolings compute what they say; embedding_avg runs no layer."""

import numpy as np
import pytest
import torch
from transformers import BertTokenizerFast

from app.backbones.huggingface import HuggingFaceBackbone
from app.backbones.pooling import pool

WORDS = "the a cat dog sat on mat sun rain plane flies runs fast slow red blue green house tree".split()


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
        pool("maximum", hidden, mask)


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


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("max", "max"),
        ("mean_sqrt_len", "mean_sqrt_len_tokens"),
        ("weighted_mean", "weightedmean"),
        ("last_token", "lasttoken"),
        ("mean", "mean"),
        ("cls", "cls"),
    ],
)
def test_sentence_transformers_poolings_match_its_own_module(ours, theirs):
    """Each pooling a folder can name gives what sentence-transformers' Pooling gives on right-padded batches."""
    from sentence_transformers.sentence_transformer.modules import Pooling as StPooling

    torch.manual_seed(0)
    hidden = torch.randn(4, 7, 5)
    mask = torch.tensor([[1] * n + [0] * (7 - n) for n in (7, 3, 1, 5)])
    expected = StPooling(5, pooling_mode=theirs)({"token_embeddings": hidden, "attention_mask": mask})
    torch.testing.assert_close(pool(ours, (hidden,), mask), expected["sentence_embedding"])
