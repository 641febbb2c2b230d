"""Adaptation on a tiny random BERT: the contrastive loss and the embedding penalty fall, the best weights are kept,
the folder serves."""

from __future__ import annotations

import itertools

import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from app.correction import CovarianceStats, fit_correction
from app.offline.adapt import AdaptConfig, TuningScorer, adapt, encode, training_head
from app.offline.datasets import Pairs
from app.offline.evaluation import cosine_rows
from app.offline.regularization import embedding_cosine
from tests.conftest import TINY_WORDS

SENTENCES = [" ".join(words) for words in itertools.combinations(TINY_WORDS, 3)][:384]  # distinct word sets


def load(folder):
    return AutoModel.from_pretrained(folder, local_files_only=True), AutoTokenizer.from_pretrained(folder)


@pytest.mark.parametrize(("method", "head"), [("simcse", "none"), ("consert", "none"), ("simcse", "mlp")])
def test_the_contrastive_loss_falls(tiny_bert, method, head):
    model, tokenizer = load(tiny_bert)
    config = AdaptConfig(method, "mean", epochs=3, batch_size=32, lr=1e-3, max_length=16, head=head)
    result = adapt(model, tokenizer, SENTENCES, lambda: 0.0, config, progress=False)
    first, last = sum(result.losses[:5]) / 5, sum(result.losses[-5:]) / 5
    assert result.steps == 36 and last < 0.7 * first, (first, last)


def test_the_best_weights_are_kept_and_a_worse_model_is_not_called_an_improvement(tiny_bert):
    model, tokenizer = load(tiny_bert)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    scores = iter([50.0, 10.0, 5.0, 1.0])  # the start scores best: every step made it worse
    config = AdaptConfig("simcse", "cls", epochs=3, batch_size=32, lr=1e-3, max_length=16)
    result = adapt(model, tokenizer, SENTENCES, lambda: next(scores), config, progress=False)
    assert (
        result.best_step == 0 and not result.improved and result.scores == [(0, 50.0), (12, 10.0), (24, 5.0), (36, 1.0)]
    )
    assert all(torch.equal(v, start[k]) for k, v in model.state_dict().items())  # back to the starting weights


def test_the_auto_figure_rates_the_weights_as_the_auto_correction_would_serve_them(tiny_bert):
    model, tokenizer = load(tiny_bert)
    left, right = SENTENCES[:150], SENTENCES[150:300]
    vectors = encode(model, tokenizer, left + right, "cls")
    mu, w = fit_correction(CovarianceStats(vectors.shape[1]).update(vectors), "whitening", alpha=0.5)
    whitened = (vectors - mu) @ w
    pairs = Pairs(left, right, cosine_rows(whitened[:150], whitened[150:]))  # gold that whitening explains
    raw, auto = (TuningScorer(model, tokenizer, [pairs], "cls", select) for select in ("raw", "auto"))
    assert raw() < 90.0 and auto() > 99.0
    assert auto.log == [{"raw": raw.log[0]["raw"], "auto": round(auto(), 2), "auto_method": "whitening"}] * 2


def test_an_unknown_augmentation_or_head_is_refused_before_training():
    with pytest.raises(ValueError, match="unknown augmentation blur"):
        _ = AdaptConfig("consert", augment=("shuffle", "blur")).views
    with pytest.raises(ValueError, match="unknown head deep"):
        training_head("deep", 8)


def test_the_guard_drops_tuning_pairs_whose_sentences_the_model_trains_on():
    """A gain on sentences the adaptation trained on is not a gain: such pairs are dropped, and counted."""
    import numpy as np

    from app.offline.adapt import held_out_pairs
    from app.offline.datasets import DataFileError

    train = Pairs(["a cat sits", "a dog runs"], ["the cat sat", "a dog ran"], np.array([4.0, 3.0]))
    dev = Pairs(["red sun", "a dog runs ", "blue sea"], ["sun is red", "dogs run", "the sea"], np.array([5.0, 1, 2]))
    kept, dropped = held_out_pairs([train, dev], {"a cat sits", "the cat sat", "a dog runs", "a dog ran"})
    assert dropped == 3 and [(p.left, list(p.scores)) for p in kept] == [(["red sun", "blue sea"], [5.0, 2.0])]
    assert held_out_pairs([train], set())[1] == 0
    with pytest.raises(DataFileError, match="all 2 tuning pairs"):
        held_out_pairs([train], {"the cat sat", "a dog runs"})


def coned(folder, out):
    """A copy of the model whose word embeddings all share one direction: the degeneration Gao et al. describe."""
    model, tokenizer = load(folder)
    with torch.no_grad():
        weight = model.embeddings.word_embeddings.weight
        weight += 3 * weight.std() * torch.randn(weight.shape[1], generator=torch.Generator().manual_seed(0))
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.mark.parametrize("method", ["none", "simcse"])
def test_the_regularizer_lowers_the_embedding_rows_mean_cosine_alone_or_with_simcse(tiny_bert, tmp_path, method):
    model, tokenizer = load(coned(tiny_bert, tmp_path / "coned"))
    config = AdaptConfig(
        method, "embedding_avg", epochs=3, batch_size=32, lr=3e-3, max_length=16, regularize="embedding"
    )
    checks = itertools.count()  # every check scores better than the one before: the last weights are kept
    result = adapt(model, tokenizer, SENTENCES, lambda: float(next(checks)), config, progress=False)
    assert result.steps == 36 and result.best_step == 36 and result.penalties[0] > 0.5
    assert embedding_cosine(model).item() < 0.5 * result.penalties[0]


def test_nothing_to_train_is_refused_before_training():
    with pytest.raises(ValueError, match="nothing to train"):
        AdaptConfig("none", "mean").views  # noqa: B018
