"""The offline commands as a user runs them: fit, eval, isotropy, report, compare, eval-search."""

from __future__ import annotations

import json

import pytest

from app.core.config import MODELS_DIR
from app.correction.publication import read_artifact_file
from tests.cli.conftest import WORDS, run_cli
from tests.conftest import STS, with_graphs


def test_help_lists_every_command():
    out = run_cli("--help", env={}).stdout
    commands = "serve fit index eval eval-search isotropy adapt report spaces compare bench load bench-search"
    for command in commands.split():
        assert command in out
    assert "--fit-corpus" in run_cli("eval", "--help", env={}).stdout


def test_fit_writes_and_publishes_an_artifact(env, corpus, store, tmp_path):
    r = run_cli("fit", "--corpus", str(corpus), "--dim", "8", "--alpha", "0.5", "--publish", env=env)
    assert r.returncode == 0, r.stderr
    artifact_id = r.stdout.strip().splitlines()[-1]
    artifact = read_artifact_file(tmp_path / "data" / "artifacts" / f"{artifact_id}.npz")
    assert artifact.out_dim == 8 and artifact.params == {"dim": 8, "alpha": 0.5, "eps": 0.0, "drop": 0}
    assert artifact.corpus.size == len(corpus.read_text().splitlines())
    assert store.artifacts.current_id(artifact.backbone.fingerprint) == artifact_id


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


def test_eval_auto_warns_when_tuned_on_the_evaluated_pairs(env, pairs):
    r = run_cli("eval", "--pairs", str(pairs), "--method", "auto", "--tune-pairs", str(pairs), "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert "overstates" in r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["selection"]["score"] == pytest.approx(result["corrected_spearman"], abs=0.01)


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


def test_report_writes_the_table_and_plots(env, corpus, graded_pairs, tmp_path):
    out = tmp_path / "report"
    args = ["--fit-corpus", str(corpus), "--test-pairs", str(graded_pairs), "--tune-pairs", str(graded_pairs)]
    r = run_cli("report", "--out", str(out), "--pooling", "mean", "--pooling", "cls", *args, env=env)
    assert r.returncode == 0, r.stderr
    md = (out / "report.md").read_text()
    lines = [line.strip("|").split("|") for line in md.splitlines() if line.startswith(("| mean |", "| cls |"))]
    rows = ["|" + "|".join(cells) + "|" for cells in lines if len(cells) == 6]  # pooling and five methods
    assert len(rows) == 2
    # Alignment and uniformity on the test pairs, raw and corrected, for each pooling; and their picture.
    geometry = {(c[0].strip(), c[1].strip()): (float(c[2]), float(c[3])) for c in lines if len(c) == 4}
    assert set(geometry) == {(p, s) for p in ("mean", "cls") for s in ("raw", "corrected")}
    # Gold 4 is an identical sentence here: perfectly aligned; the raw space is the one `eval` measures too.
    assert all(alignment == 0.0 and -4.0 < uniformity < 0.0 for alignment, uniformity in geometry.values())
    evaluated = run_cli("eval", "--pairs", str(graded_pairs), "--pooling", "mean", "--json", env=env)
    assert json.loads(evaluated.stdout.splitlines()[-1])["raw_uniformity"] == pytest.approx(
        geometry["mean", "raw"][1], abs=5e-4
    )
    scores = [float(cell.split()[0]) for cell in rows[0].strip("|").split("|")[1:]]
    assert len(scores) == 5 and len(set(scores)) > 1  # the methods really differ on graded pairs
    for name in (
        "spectrum-mean.png",
        "cosines-mean.png",
        "spaces-mean.png",
        "geometry-mean.png",
        "spectrum-cls.png",
        "cosines-cls.png",
        "spaces-cls.png",
        "geometry-cls.png",
    ):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"]({name})" in md
    assert "IsoScore" in md
    r = run_cli("report", "--out", str(out), "--pooling", "max", *args, env=env)
    assert r.returncode == 2 and "unknown pooling 'max'" in r.stderr


def test_compare_tables_every_method_and_sif_only_where_it_applies(env, corpus, graded_pairs):
    args = ["--fit-corpus", str(corpus), "--test-pairs", str(graded_pairs), "--tune-pairs", str(graded_pairs)]
    r = run_cli("compare", "--pooling", "mean", "--pooling", "cls", "--flow-seconds", "5", *args, "--json", env=env)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    methods = {(row["pooling"], row["method"]) for row in rows}
    assert {("mean", m) for m in ("none", "center", "abtt", "whitening", "flow", "sif")} <= methods
    assert ("cls", "flow") in methods and ("cls", "sif") not in methods  # SIF reweights an average: not CLS
    assert all(row["fit_seconds"] >= 0 and row["apply_ms_per_1000"] > 0 and row["dim"] > 0 for row in rows)
    none, sif = (next(row for row in rows if row["pooling"] == "mean" and row["method"] == m) for m in ("none", "sif"))
    assert sif["spearman"] != none["spearman"]
    table = run_cli("compare", "--pooling", "embedding_avg", "--flow-seconds", "5", *args, env=env).stdout
    assert table.startswith("| method | embedding_avg | fit s | apply ms / 1k |") and "| sif (a=0.001) |" in table
    only = run_cli("compare", "--pooling", "cls", "--method", "none", "--method", "sif", *args, "--json", env=env)
    assert [row["method"] for row in json.loads(only.stdout)["rows"]] == ["none"]  # no SIF for CLS
    r = run_cli("compare", "--method", "pca", *args, env=env)
    assert r.returncode == 2 and "unknown method 'pca'" in r.stderr


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


def test_bad_input_files_exit_2_with_the_line(env, tmp_path):
    r = run_cli("eval", "--pairs", str(tmp_path / "missing.tsv"), env=env)
    assert r.returncode == 2 and "file not found" in r.stderr
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\t1\nc\td\n")
    r = run_cli("eval", "--pairs", str(bad), env=env)
    assert r.returncode == 2 and "bad.tsv:2:" in r.stderr


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


def test_eval_search_scores_a_tiny_collection_and_reuses_its_cache(env, tmp_path):
    from tests.offline.test_retrieval import write_collection

    docs = [
        {"_id": str(i), "title": "", "text": f"the {w} {v} at night"}
        for i, (w, v) in enumerate(
            [("cat", "sleeps"), ("dog", "runs"), ("plane", "flies"), ("river", "sings"), ("child", "reads")]
        )
    ]
    queries = [{"_id": "q0", "text": "cat sleeps"}, {"_id": "q1", "text": "plane flies"}]
    folder = write_collection(tmp_path / "tiny", docs, queries, [("q0", "0", 1), ("q1", "2", 2)])
    runs = [run_cli("eval-search", "--data", str(folder), "--correction", "none", "--json", env=env) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr[-2000:]
    result = json.loads(runs[0].stdout.strip().splitlines()[-1])
    assert (result["n_queries"], result["n_docs"], result["correction"]) == (2, 5, None)
    # each query's one relevant document shares its words: ranked first, raw and (no correction) corrected
    assert result["raw_ndcg_at_10"] == result["ndcg_at_10"] == 100.0 and result["ndcg_at_10_change_95"] == [0, 0]
    assert result["raw_recall_at_100"] == result["index_recall_at_100"] == 100.0
    assert json.loads(runs[1].stdout.strip().splitlines()[-1]) == result
    assert len(list((tmp_path / "data" / "cache" / "retrieval").glob("*.npy"))) == 2  # documents, queries: once
    r = run_cli("eval-search", "--data", str(tmp_path), env=env)
    assert r.returncode == 2 and "corpus.jsonl" in r.stderr
    # Fitted now, its search space chosen on the same judgments: raw already ranks perfectly, so the rule keeps raw.
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"the {a} {b} at {c}" for a in "abcdefgh" for b in "ijklmnop" for c in "qrstu"))
    r = run_cli(
        "eval-search",
        "--data",
        str(folder),
        "--correction",
        "fit",
        "--method",
        "whitening",
        "--alpha",
        "0.5",
        "--fit-corpus",
        str(corpus),
        "--tune-qrels",
        str(folder),
        "--json",
        env=env,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    fitted = json.loads(r.stdout.strip().splitlines()[-1])
    assert fitted["correction"].startswith("whitening-") and fitted["space"] == "search"
    space = fitted["search_space"]
    assert (space["method"], space["shared_with_similarity"], space["tuned_on"]) == ("none", False, "tiny")
    assert space["raw"]["ndcg_at_10"] == [100.0] and fitted["ndcg_at_10"] == fitted["raw_ndcg_at_10"] == 100.0
    out = tmp_path / "tuned.npz"
    r = run_cli(
        "fit",
        "--corpus",
        str(corpus),
        "--method",
        "whitening",
        "--alpha",
        "0.5",
        "--tune-qrels",
        str(folder),
        "--out",
        str(out),
        env=env,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    search = read_artifact_file(out).extra["search"]
    ranking = ("ranking", "ranking_selection")  # fit also chooses the ranking on the judgments
    chosen_space = {k: v for k, v in search.items() if k not in ranking}
    assert chosen_space == {k: v for k, v in space.items() if k != "correction"}
    assert search["ranking"]["mode"] == "dense" and search["ranking_selection"]["tuned_on"] == "tiny"  # nothing to gain
    assert search["ranking_selection"]["candidates"] == 25  # 23 rankings and 2 of them with feedback
