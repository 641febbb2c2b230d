"""The correction commands as a user runs them: fit, eval and isotropy."""

from __future__ import annotations

import json

import pytest

from app.core.config import MODELS_DIR
from app.correction.publication import read_artifact_file
from tests.cli.conftest import WORDS, run_cli
from tests.conftest import STS, with_graphs


@pytest.mark.process
def test_help_lists_every_command():
    out = run_cli("--help", env={}).stdout
    commands = "serve fit index eval eval-search isotropy adapt report spaces compare bench load bench-search"
    for command in commands.split():
        assert command in out
    assert "--fit-corpus" in run_cli("eval", "--help", env={}).stdout


@pytest.mark.process
def test_fit_writes_and_publishes_an_artifact(env, corpus, store, tmp_path):
    r = run_cli("fit", "--corpus", str(corpus), "--dim", "8", "--alpha", "0.5", "--publish", env=env)
    assert r.returncode == 0, r.stderr
    artifact_id = r.stdout.strip().splitlines()[-1]
    artifact = read_artifact_file(tmp_path / "data" / "artifacts" / f"{artifact_id}.npz")
    assert artifact.out_dim == 8 and artifact.params == {"dim": 8, "alpha": 0.5, "eps": 0.0, "drop": 0}
    assert artifact.corpus.size == len(corpus.read_text().splitlines())
    assert store.artifacts.current_id(artifact.backbone.fingerprint) == artifact_id


@pytest.mark.process
def test_eval_json_on_a_pairs_file(env, tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("\n".join(f"the {a} runs\tthe {b} runs\t{5.0 if a == b else 1.0}" for a in WORDS for b in WORDS))
    r = run_cli("eval", "--pairs", str(pairs), "--dim", "4", "--json", env=env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["n_pairs"] == len(WORDS) ** 2 and result["dim"] == 4 and result["method"] == "whitening"
    # Identical texts (gold 5) have cosine 1 in any space and every other pair less: both rank them the same
    assert result["raw_spearman"] == result["corrected_spearman"] > 0
    # Its paraphrases (gold 5, >= 4) are the identical pairs: perfectly aligned in any space; whitening spreads
    # the hashing backbone's shared offset, so the corrected space is the more uniform one.
    assert result["positive_pairs"] == len(WORDS) and result["raw_alignment"] == result["alignment"] == 0.0
    assert result["uniformity"] < result["raw_uniformity"] - 0.5


@pytest.mark.process
def test_auto_records_its_choice_and_falls_back_to_the_default_without_pairs(env, corpus, pairs, tmp_path):
    r = run_cli("fit", "--corpus", str(corpus), "--method", "auto", "--tune-pairs", str(pairs), env=env)
    assert r.returncode == 0, r.stderr
    artifact = read_artifact_file(tmp_path / "data" / "artifacts" / f"{r.stdout.split()[-1]}.npz")
    selection = artifact.extra["selection"]
    assert selection["tuned_on"] == "pairs.tsv" and selection["candidates"] > 100
    assert artifact.method in ("none", "center", "abtt", "whitening")
    assert set(artifact.extra["isotropy"]) == {"raw", "corrected"}
    r = run_cli("fit", "--corpus", str(corpus), "--method", "auto", "--no-tune", env=env)
    artifact = read_artifact_file(tmp_path / "data" / "artifacts" / f"{r.stdout.split()[-1]}.npz")
    assert artifact.method == "whitening" and artifact.params["alpha"] == 0.15
    assert artifact.extra["selection"]["tuned_on"] is None


@pytest.mark.process
def test_eval_auto_warns_when_tuned_on_the_evaluated_pairs(env, pairs):
    r = run_cli("eval", "--pairs", str(pairs), "--method", "auto", "--tune-pairs", str(pairs), "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert "overstates" in r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["selection"]["score"] == pytest.approx(result["corrected_spearman"], abs=0.01)


@pytest.mark.process
def test_isotropy_prints_raw_and_corrected(env, corpus, tmp_path):
    r = run_cli("fit", "--corpus", str(corpus), "--alpha", "0.5", "--out", str(tmp_path / "w.npz"), env=env)
    assert r.returncode == 0, r.stderr
    r = run_cli("isotropy", "--corpus", str(corpus), "--artifact", str(tmp_path / "w.npz"), "--json", env=env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    raw, fixed = result["raw"], result["corrected"]
    # The hashing backbone adds a shared offset: a cone that full whitening opens up.
    assert raw["mean_random_cosine"] > 0.5 > abs(fixed["mean_random_cosine"])
    assert fixed["isoscore"] > raw["isoscore"] and fixed["effective_rank"] > raw["effective_rank"]
    r = run_cli("isotropy", "--corpus", str(corpus), env=env)  # nothing bundled in this models dir
    assert r.returncode == 3 and "--artifact" in r.stderr


@pytest.mark.process
@pytest.mark.parametrize("method", ["flow", "sif"])
def test_fit_and_eval_with_the_literatures_other_corrections(env, corpus, graded_pairs, tmp_path, method):
    r = run_cli(
        "fit",
        "--corpus",
        str(corpus),
        "--method",
        method,
        "--flow-seconds",
        "5",
        "--out",
        str(tmp_path / "a.npz"),
        env=env,
    )
    assert r.returncode == 0, r.stderr
    artifact = read_artifact_file(tmp_path / "a.npz")
    assert artifact.method == method and artifact.id == r.stdout.strip() and artifact.arrays
    r = run_cli("eval", "--pairs", str(graded_pairs), "--method", method, "--flow-seconds", "5", "--json", env=env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["method"] == method and result["corrected_spearman"] != result["raw_spearman"]
    r = run_cli("fit", "--corpus", str(corpus), "--method", "sif", "--pooling", "cls", env=env)
    assert r.returncode == 2 and "mean or embedding_avg" in r.stderr


@pytest.mark.process
def test_auto_weighs_flow_and_sif_against_its_linear_choice(env, corpus, graded_pairs, tmp_path):
    args = ["--corpus", str(corpus), "--method", "auto", "--tune-pairs", str(graded_pairs), "--flow-seconds", "5"]
    r = run_cli("fit", *args, "--also", "flow", "--also", "sif", "--out", str(tmp_path / "a.npz"), env=env)
    assert r.returncode == 0, r.stderr
    artifact = read_artifact_file(tmp_path / "a.npz")
    selection = artifact.extra["selection"]
    assert set(selection["also"]) == {"flow", "sif"}
    assert selection["linear_choice"]["score"] == pytest.approx(selection["score"], abs=0.05)
    # On these pairs neither beats the linear choice (SIF ~88 and a 5-second flow far below its ~96): it stays
    assert max(selection["also"].values()) < selection["score"] and selection["also_gain_lower_bound"] < 0.1
    assert artifact.method == selection["linear_choice"]["method"]
    r = run_cli("fit", *args, "--also", "pca", env=env)
    assert r.returncode == 2 and "--also takes flow or sif" in r.stderr


@pytest.mark.process
def test_bad_input_files_exit_2_with_the_line(env, tmp_path):
    r = run_cli("eval", "--pairs", str(tmp_path / "missing.tsv"), env=env)
    assert r.returncode == 2 and "file not found" in r.stderr
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\t1\nc\td\n")
    r = run_cli("eval", "--pairs", str(bad), env=env)
    assert r.returncode == 2 and "bad.tsv:2:" in r.stderr


@pytest.mark.process
@pytest.mark.model
def test_make_models_reproduces_the_default_backbones_bundled_correction(tmp_path, onnx_graphs):
    """The Makefile's fit for the default backbone (ONNX int8, mean pooling) gives the bundled artifact, same id:
    the id hashes W, whose eigenvector signs are fixed, so a refit anywhere names the same correction."""
    data = with_graphs(onnx_graphs, tmp_path / "data")
    out = tmp_path / "mean.npz"
    args = ["fit", "--corpus", str(STS / "sts-train.csv"), "--pooling", "mean", "--method", "auto", "--out", str(out)]
    r = run_cli(*args, env={"CE_BACKBONE": "onnx", "CE_QUANTIZE": "int8", "CE_DATA_DIR": str(data)}, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (
        read_artifact_file(out).id == read_artifact_file(MODELS_DIR / "all-MiniLM-L6-v2" / "onnx-int8" / "mean.npz").id
    )
