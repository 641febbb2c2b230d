"""`adapt` as a user runs it: an adapted or regularized folder serves with a new fingerprint, and a model that did
not beat its start is not written, with the reason."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest

from app.backbones.huggingface import HuggingFaceBackbone
from app.core.errors import ArtifactError
from app.correction.publication import check_compatible
from app.offline.adapt import encode
from app.offline.evaluation import cosine_rows
from app.offline.fit import fit_artifact
from tests.conftest import ROOT, TINY_WORDS
from tests.offline.test_adapt import coned, load

SENTENCES = [" ".join(words) for words in itertools.combinations(TINY_WORDS, 3)][:384]  # distinct word sets


@pytest.mark.process
def test_an_adapted_folder_is_known_by_its_weights_and_moved_weights_refuse_the_old_correction(tiny_bert, tmp_path):
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
    assert summary["scores"][0][1] > summary["scores"][1][1]  # --force wrote the best step: the starting weights
    before = HuggingFaceBackbone(tiny_bert, pooling="mean", max_length=32)
    same = HuggingFaceBackbone(out, pooling="mean", max_length=32)
    assert same.fingerprint == before.fingerprint  # the same weights in another folder: the same backbone
    old = fit_artifact(before, SENTENCES, "whitening", {"alpha": 0.5}, progress=False)
    check_compatible(old, same)
    from safetensors.numpy import load_file, save_file

    tensors = load_file(out / "model.safetensors")
    name = sorted(tensors)[0]
    save_file({**tensors, name: tensors[name] + 0.01}, out / "model.safetensors")  # the weights moved
    after = HuggingFaceBackbone(out, pooling="mean", max_length=32)
    assert after.dim == before.dim and after.fingerprint != before.fingerprint
    with pytest.raises(ArtifactError, match="fitted on backbone .*: weights: [0-9a-f]+ fitted, [0-9a-f]+ serving"):
        check_compatible(old, after)


@pytest.mark.process
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


@pytest.mark.process
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
