"""`known-items` and `tune` as a user runs them. Tuning on judgments sent over HTTP end to end, two servers and a
child process: tests/integration/test_judgments_tune.py."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import WORDS, run_cli


@pytest.mark.process
def test_known_items_writes_a_judged_collection_from_plain_texts(env, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"the {a} and the {b} near a {c}" for a in WORDS for b in WORDS for c in WORDS[:4]))
    out = tmp_path / "known"
    done = run_cli(
        "known-items",
        "--corpus",
        str(corpus),
        "--docs",
        "300",
        "--identifiers",
        "6",
        "--rare",
        "0",
        "--out",
        str(out),
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    queries = [json.loads(line) for line in (out / "queries.jsonl").read_text().splitlines()]
    docs = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    qrels = (out / "qrels" / "test.tsv").read_text().splitlines()[1:]
    assert len(queries) == 6 and len(docs) == 300 and len(qrels) == 6
    for query, judged in zip(queries, qrels, strict=True):
        query_id, doc_id, grade = judged.split("\t")
        assert query_id == query["_id"] and grade == "1"
        assert query["text"] in next(d["text"] for d in docs if d["_id"] == doc_id)  # planted in its one document
    refused = run_cli("known-items", "--out", str(out), env=env)
    assert refused.returncode == 2 and "--data" in refused.stderr


@pytest.mark.process
def test_tune_without_judgments_says_so(env):
    done = run_cli("tune", "--collection", "default", env=env)
    assert done.returncode == 2 and "judg" in done.stderr
