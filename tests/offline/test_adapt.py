"""Adaptation on a tiny random BERT: the contrastive loss and the embedding penalty fall, the best weights are kept,
the folder serves."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from app.backbones.huggingface import HuggingFaceBackbone
from app.core.errors import ArtifactError
from app.correction import CovarianceStats, fit_correction
from app.correction.publication import check_compatible
from app.offline.adapt import AdaptConfig, TuningScorer, adapt, encode, training_head
from app.offline.datasets import Pairs
from app.offline.evaluation import cosine_rows
from app.offline.fit import fit_artifact
from app.offline.regularization import embedding_cosine
from tests.conftest import ROOT, TINY_WORDS

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


def test_the_adapted_folder_serves_with_a_new_fingerprint_and_refuses_the_old_correction(tiny_bert, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES))
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(
        "\n".join(f"{a}\t{b}\t{i % 5}" for i, (a, b) in enumerate(zip(SENTENCES, SENTENCES[1:], strict=False)))
    )
    out = tmp_path / "adapted"
    env = {"CE_MODEL_PATH": str(tiny_bert), "CE_BACKBONE": "huggingface", "PATH": "/usr/bin:/bin"}
    args = [
        "adapt",
        "--corpus",
        str(corpus),
        "--out",
        str(out),
        "--method",
        "consert",
        "--batch-size",
        "32",
        "--lr",
        "0.001",
        "--max-length",
        "16",
        "--tune-pairs",
        str(pairs),
        "--head",
        "mlp",
        "--force",
        "--keep-seen-pairs",
    ]
    run = subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    summary = json.loads((out / "adapt.json").read_text())
    assert summary["steps"] == 12 and summary["views"] == ["shuffle", "feature-cutoff"] and summary["head"] == "mlp"
    assert load(out)[0].state_dict().keys() == load(tiny_bert)[0].state_dict().keys()  # the head is not saved
    assert summary["selected_on"] == "auto" and [c["step"] for c in summary["checks"]] == [0, 12]
    assert [c["auto"] for c in summary["checks"]] == [score for _, score in summary["scores"]]
    before = HuggingFaceBackbone(tiny_bert, pooling="mean", max_length=32)
    after = HuggingFaceBackbone(out, pooling="mean", max_length=32)
    assert after.dim == before.dim and after.fingerprint != before.fingerprint
    old = fit_artifact(before, SENTENCES, "whitening", {"alpha": 0.5}, progress=False)
    check_compatible(old, before)
    with pytest.raises(ArtifactError, match="fitted on backbone"):
        check_compatible(old, after)


def test_a_model_that_did_not_beat_the_start_is_not_written_and_the_reason_is_given(tiny_bert, tmp_path):
    model, tokenizer = load(tiny_bert)
    left, right = SENTENCES[:100], SENTENCES[100:200]
    gold = cosine_rows(encode(model, tokenizer, left, "mean"), encode(model, tokenizer, right, "mean"))
    pairs = tmp_path / "pairs.tsv"  # gold = the starting model's own cosines: it scores 100, no step can beat it
    pairs.write_text("\n".join(f"{a}\t{b}\t{g:.6f}" for a, b, g in zip(left, right, gold, strict=True)))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES))
    out = tmp_path / "adapted"
    env = {"CE_MODEL_PATH": str(tiny_bert), "CE_BACKBONE": "huggingface", "PATH": "/usr/bin:/bin"}
    args = [
        "adapt",
        "--corpus",
        str(corpus),
        "--out",
        str(out),
        "--batch-size",
        "64",
        "--lr",
        "0.001",
        "--max-length",
        "16",
        "--tune-pairs",
        str(pairs),
        "--select",
        "raw",
        "--keep-seen-pairs",
    ]
    run = subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 2 and not out.exists()
    assert "no step beat the starting model on pairs.tsv, raw (start 100.00, best step" in run.stderr


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


def test_the_regularized_folder_serves_with_a_new_fingerprint(tiny_bert, tmp_path):
    start = coned(tiny_bert, tmp_path / "coned")
    model, tokenizer = load(start)
    left, right = SENTENCES[:100], SENTENCES[100:200]
    vectors = encode(model, tokenizer, left + right, "embedding_avg")
    centred = vectors - vectors.mean(axis=0)  # gold: the cosines once the shared direction is gone
    pairs = tmp_path / "pairs.tsv"
    gold = cosine_rows(centred[:100], centred[100:])
    pairs.write_text("\n".join(f"{a}\t{b}\t{g:.6f}" for a, b, g in zip(left, right, gold, strict=True)))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES[200:]))
    out = tmp_path / "regularized"
    env = {"CE_MODEL_PATH": str(start), "CE_BACKBONE": "huggingface", "PATH": "/usr/bin:/bin"}
    args = [
        "adapt",
        "--corpus",
        str(corpus),
        "--out",
        str(out),
        "--method",
        "none",
        "--regularize",
        "embedding",
        "--reg-weight",
        "2",
        "--pooling",
        "embedding_avg",
        "--batch-size",
        "16",
        "--lr",
        "0.003",
        "--tune-pairs",
        str(pairs),
        "--select",
        "raw",
    ]
    run = subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]  # written without --force: it beat the start
    summary = json.loads((out / "adapt.json").read_text())
    assert (summary["method"], summary["regularize"], summary["reg_weight"]) == ("none", "embedding", 2.0)
    assert summary["embedding_cosine"]["kept"] < 0.7 * summary["embedding_cosine"]["start"]
    assert summary["best_score"] > summary["start_score"]
    before = HuggingFaceBackbone(start, pooling="embedding_avg", max_length=32)
    after = HuggingFaceBackbone(out, pooling="embedding_avg", max_length=32)
    assert after.fingerprint != before.fingerprint and after.encode(SENTENCES[:4]).shape == (4, before.dim)
