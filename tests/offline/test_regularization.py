"""The embedding penalty: the mean cosine of every pair of the embedding matrix's rows."""

from __future__ import annotations

import pytest
import torch

from app.offline.regularization import embedding_cosine
from tests.offline.test_adapt import load


def test_the_embedding_penalty_is_the_mean_cosine_of_every_pair_of_rows(tiny_bert):
    model, _ = load(tiny_bert)
    rows = torch.nn.functional.normalize(model.embeddings.word_embeddings.weight.detach(), dim=1)
    assert embedding_cosine(model).item() == pytest.approx((rows @ rows.T).mean().item(), abs=1e-6)
