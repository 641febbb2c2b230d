"""`bench-tune` and `eval-http`: a judged collection posted to a fresh service over HTTP, tuned or evaluated."""

from __future__ import annotations

import json

import pytest

from app.offline.known_items import from_texts, known_items, write_beir
from tests.cli.conftest import run_cli


@pytest.mark.process
def test_bench_tune_posts_a_judged_collection_and_prints_the_published_choice(tmp_path):
    fruits, colours = "apples pears plums figs dates limes".split(), "red green blue gold".split()
    texts = [f"entry {i} lists {fruits[i % 6]} and {colours[i // 6]}" for i in range(24)]
    folder = write_beir(known_items(from_texts(texts), identifiers=12, rare=0, seed=1), tmp_path / "known")
    env = {"CE_BACKBONE": "hashing", "CE_MODELS_DIR": str(tmp_path / "models")}
    r = run_cli("bench-tune", "--data", str(folder), "--json", env=env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["state"] == "done" and result["judgments"] == 12
    assert result["queries"]["tuning"] + result["queries"]["held_out"] == 12
    held = result["held_out"]
    assert result["published"] == (held["chosen"]["ndcg_at_10"] >= held["default"]["ndcg_at_10"])


@pytest.mark.process
def test_eval_http_runs_twice_on_fresh_services_and_finds_every_ranking_the_same(tmp_path):
    words = "apples pears plums figs dates limes red green blue gold".split()
    texts = [f"entry {i} lists {words[i % 10]} and {words[(i * 3) % 10]}" for i in range(60)]
    folder = write_beir(known_items(from_texts(texts), identifiers=12, rare=0, seed=1), tmp_path / "known")
    env = {"CE_BACKBONE": "hashing", "CE_MODELS_DIR": str(tmp_path / "models"), "CE_MAX_TEXTS": "8"}
    r = run_cli("eval-http", "--data", str(folder), "--clients", "4", "--runs", "2", "--json", env=env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    first, second = result["runs"]
    assert result["identical"] and first["rankings_sha256"] == second["rankings_sha256"]
    assert first["n_queries"] == 12 and first["ndcg_at_10"] == second["ndcg_at_10"] > 50
