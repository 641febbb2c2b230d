"""`report`, `compare` and `spaces` as a user runs them: tables, plots and pictures of a collection."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import WORDS, run_cli


@pytest.mark.process
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
    r = run_cli("report", "--out", str(out), "--pooling", "maximum", *args, env=env)
    assert r.returncode == 2 and "unknown pooling 'maximum'" in r.stderr


@pytest.mark.process
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


@pytest.mark.process
def test_spaces_draws_a_collections_documents_coloured_by_a_metadata_field(env, tmp_path):
    docs = tmp_path / "docs.jsonl"
    rows = [
        {"id": f"d{i}", "text": f"the {a} near the {b}", "metadata": {"topic": a} if i % 5 else {}}
        for i, (a, b) in enumerate((a, b) for a in WORDS[:4] for b in WORDS)
    ]
    docs.write_text("\n".join(map(json.dumps, rows)))
    assert run_cli("index", "--corpus", str(docs), env=env).returncode == 0
    r = run_cli("spaces", "--color-by", "topic", "--sample", "50", env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    picture = tmp_path / "data" / "report" / "documents-default.png"
    assert r.stdout.strip() == str(picture) and picture.read_bytes()[:4] == b"\x89PNG"
    missing = run_cli("spaces", "--color-by", "author", env=env)
    assert missing.returncode == 2 and "no document of 'default' has a metadata field 'author'" in missing.stderr
    unknown = run_cli("spaces", "--color-by", "topic", "--collection", "notes", env=env)
    assert unknown.returncode == 2 and "no collection named 'notes'" in unknown.stderr
    assert run_cli("collections", "create", "notes", env=env).returncode == 0
    empty = run_cli("spaces", "--color-by", "topic", "--collection", "notes", env=env)
    assert empty.returncode == 2 and "holds 0 documents" in empty.stderr
