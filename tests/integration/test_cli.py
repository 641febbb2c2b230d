"""The CLI as users run it: real processes, real Redis, exit codes and messages."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time

import httpx
import numpy as np
import pytest

from app.core.config import MODELS_DIR
from app.correction.registry import read_artifact_file
from tests.conftest import STS, free_port, server_env, server_log, start_server, stop_server, with_graphs
from tests.integration.conftest import run_cli

WORDS = "cat dog bird plane river city park night joy rain sun tree house road car boat".split()


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(f"the {a} and the {b} near a {c}" for a in WORDS for b in WORDS[::3] for c in WORDS[::5]))
    return path


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
    assert store.current_artifact_id(artifact.backbone.fingerprint) == artifact_id


def test_eval_json_on_a_pairs_file(env, tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("\n".join(f"the {a} runs\tthe {b} runs\t{5.0 if a == b else 1.0}" for a in WORDS for b in WORDS))
    r = run_cli("eval", "--pairs", str(pairs), "--dim", "4", "--json", env=env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["n_pairs"] == len(WORDS) ** 2 and result["dim"] == 4 and result["method"] == "whitening"
    # Identical texts (gold 5) have cosine 1 in any space and every other pair less: both rank them the same
    assert result["raw_spearman"] == result["corrected_spearman"] > 0


@pytest.fixture
def pairs(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("\n".join(f"the {a} runs\tthe {b} runs\t{5.0 if a == b else 1.0}" for a in WORDS for b in WORDS))
    return path


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


@pytest.fixture
def graded_pairs(tmp_path):
    """Pairs of 4-word sentences; gold = how many words they share, so corrections can reorder them."""
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(600):
        a = list(rng.choice(WORDS, 4, replace=False))
        shared = int(rng.integers(0, 5))
        b = a[:shared] + list(rng.choice([w for w in WORDS if w not in a], 4 - shared, replace=False))
        lines.append(f"{' '.join(a)}\t{' '.join(b)}\t{shared:.1f}")
    path = tmp_path / "graded.tsv"
    path.write_text("\n".join(lines))
    return path


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
    rows = [line for line in md.splitlines() if line.startswith("| mean |") or line.startswith("| cls |")]
    assert len(rows) == 2
    scores = [float(cell.split()[0]) for cell in rows[0].strip("|").split("|")[1:]]
    assert len(scores) == 5 and len(set(scores)) > 1  # the methods really differ on graded pairs
    for name in ("spectrum-mean.png", "cosines-mean.png", "spaces-mean.png", "spectrum-cls.png", "cosines-cls.png",
                 "spaces-cls.png"):  # fmt: skip
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
    r = run_cli("fit", "--corpus", str(corpus), "--method", method, "--flow-seconds", "5",
                "--out", str(tmp_path / "a.npz"), env=env)  # fmt: skip
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


def test_index_adds_documents_idempotently(env, tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "the cat sleeps", "metadata": {"k": 1}}\nthe dog barks at night\n')
    for _ in range(2):
        r = run_cli("index", "--corpus", str(docs), env=env)
        assert r.returncode == 0, r.stderr
    assert "the store holds 2" in r.stdout


@pytest.mark.model
def test_serve_end_to_end_with_embedded_redis_and_restart(tmp_path):
    """`python -m app serve` as `make run` starts it: default backbone, bundled correction, embedded Redis."""
    port = free_port()
    env, base = server_env(tmp_path, port), f"http://127.0.0.1:{port}"
    proc = start_server(env, base)
    try:
        info = httpx.get(f"{base}/info").json()
        bundled = read_artifact_file(MODELS_DIR / "all-MiniLM-L6-v2" / "onnx-int8" / "mean.npz")  # the default's own
        assert (
            info["correction"]["id"] == bundled.id and info["backbone"]["fingerprint"] == bundled.backbone.fingerprint
        )
        r = httpx.post(f"{base}/embed", json={"texts": ["hello there"]}).json()
        assert len(r["embeddings"][0]) == bundled.out_dim == 256
        doc = {"id": "sts", "text": "a plane is taking off ."}
        assert httpx.post(f"{base}/documents", json={"documents": [doc]}).status_code == 201
        assert httpx.get(f"{base}/search", params={"q": "a private zebra query"}).status_code == 200
    finally:
        stop_server(proc)
    assert "zebra" not in server_log(proc)  # what users search for is not written to the log
    assert (tmp_path / "data" / "redis" / "appendonly.aof").exists()
    assert list((tmp_path / "data" / "index").glob("*.npz"))  # the shutdown snapshot
    proc = start_server(env, base)
    try:
        hits = httpx.get(f"{base}/search", params={"q": "an air plane is taking off ."}).json()["results"]
        assert [h["id"] for h in hits] == ["sts"]
        assert httpx.get(f"{base}/info").json()["index"]["opened"]["from"] == "snapshot"
    finally:
        stop_server(proc)


@pytest.fixture
def embedded_redis_cleanup(tmp_path):
    """A SIGKILLed server leaves its embedded redis-server running: stop it, whatever the test did."""
    yield
    import redis

    from app.store.embedded import EmbeddedRedis

    sock = EmbeddedRedis(tmp_path / "data" / "redis").socket_path
    if sock.exists():
        with contextlib.suppress(redis.RedisError):  # it answers a shutdown by closing the connection
            redis.Redis(unix_socket_path=str(sock)).shutdown(nosave=True)


def test_kill_9_during_bulk_ingestion_loses_no_acknowledged_document(tmp_path, embedded_redis_cleanup):
    """A snapshot, writes and deletes after it, then SIGKILL while a client is still ingesting.

    After the restart every document that got a 2xx is there and searchable in both indexes (a third of them
    long: several passages each), deleted ones are not, nothing is duplicated, and at most the one batch in
    flight at the kill may also have landed.
    """
    port = free_port()
    env = server_env(tmp_path, port, CE_BACKBONE="hashing", CE_SNAPSHOT_INTERVAL="2", CE_FOLLOW_INTERVAL="0.1",
                     CE_MAX_LENGTH="16")  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    filler = " ".join(["Lorem ipsum dolor sit amet."] * 5)  # 25 words: over the 14-token window
    words = [f"{WORDS[n % 16]} {WORDS[n * 7 % 16]} number{n}" + (f". {filler}" if n % 3 == 0 else "")
             for n in range(5000)]  # fmt: skip

    def doc(i: int) -> dict:
        return {"id": f"d{i}", "text": words[i], "metadata": {"i": i}}

    acknowledged: list[int] = []
    in_flight: list[int] = []

    def ingest(start: int) -> None:
        with httpx.Client(base_url=base, timeout=10) as client:
            for first in range(start, len(words), 25):
                batch = list(range(first, min(first + 25, len(words))))
                in_flight[:] = batch
                try:
                    if client.post("/documents", json={"documents": [doc(i) for i in batch]}).status_code == 201:
                        acknowledged.extend(batch)
                except httpx.TransportError:
                    return  # the server is gone

    proc = start_server(env, base)
    try:
        for start in range(0, 120, 40):
            batch = [doc(i) for i in range(start, start + 40)]
            assert httpx.post(f"{base}/documents", json={"documents": batch}).status_code == 201
        snapshots = tmp_path / "data" / "index"
        deadline = time.monotonic() + 10
        while not list(snapshots.glob("*.npz")) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert list(snapshots.glob("*.npz")), "no snapshot was written"
        for i in (3, 110):  # after the snapshot: replayed from the change log at restart
            assert httpx.delete(f"{base}/documents/d{i}").status_code == 204
        writer = threading.Thread(target=ingest, args=(120,))
        writer.start()
        deadline = time.monotonic() + 60
        while len(acknowledged) < 300 and writer.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(acknowledged) >= 300, "ingestion did not get going"
    finally:
        proc.kill()  # SIGKILL mid-ingestion: no shutdown, no final snapshot
        proc.wait()
    writer.join(timeout=30)
    expected = {f"d{i}" for i in range(120) if i not in (3, 110)} | {f"d{i}" for i in acknowledged}
    maybe = {f"d{i}" for i in in_flight}  # sent, not acknowledged: either outcome is correct

    proc = start_server(env, base)
    try:
        index = httpx.get(f"{base}/info").json()["index"]
        size = index["documents"]
        assert len(expected) <= size <= len(expected | maybe) and index["lexical"]["documents"] == size
        assert index["size"] > size  # the long documents' passages
        for i in sorted({0, 77, 119, *acknowledged[:: max(1, len(acknowledged) // 20)], acknowledged[-1]}):
            for mode, q in (("dense", words[i]), ("lexical", f"number{i}")):
                hits = httpx.get(f"{base}/search", params={"q": q, "k": 1, "mode": mode}).json()["results"]
                assert hits[0]["id"] == f"d{i}" and hits[0]["metadata"] == {"i": i}, (mode, i)
        for i in (3, 110):
            assert httpx.get(f"{base}/documents/d{i}").status_code == 404
        import redis

        from app.store.embedded import EmbeddedRedis

        store = redis.Redis(unix_socket_path=str(EmbeddedRedis(tmp_path / "data" / "redis").socket_path))
        (ids_key,) = store.keys("ce:docs:*")
        assert store.scard(ids_key) == size  # one stored document per id: nothing duplicated, index == store
    finally:
        stop_server(proc)


def test_bench_reports_every_figure_against_a_real_server(tmp_path):
    env = {"CE_BACKBONE": "hashing", "CE_MODELS_DIR": str(tmp_path / "models")}
    r = run_cli("bench", "--texts", "64", "--json", env=env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    for pattern in ("a_8_clients_x_8_texts", "b_32_clients_x_1_text"):
        figures = result[pattern]
        assert figures["errors"] == 0 and figures["sentences_per_s"] > 0 and figures["p99_ms"] >= figures["p50_ms"]
        ratio = figures["sentences_per_s"] / result["sentence_transformers_per_s"]
        assert figures["ratio_to_sentence_transformers"] == pytest.approx(ratio, rel=1e-2)
    assert result["sentence_transformers_per_s"] > 0 and result["runtime"] == "hashing"
    assert result["a_8_clients_x_8_texts"]["requests"] == 8 and result["b_32_clients_x_1_text"]["requests"] == 64
    assert result["server_peak_rss_mb"] > 10 and result["single_text_ratio"] > 0


def test_bench_search_prints_every_figure_against_exact_search(tmp_path):
    env = {"CE_BACKBONE": "hashing", "CE_MODELS_DIR": str(tmp_path / "models"), "CE_DATA_DIR": str(tmp_path / "d")}
    r = run_cli("bench-search", "--n", "25000", "--queries", "100", "--hybrid-docs", "3000", "--json", env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    result = json.loads(lines[-1])
    assert result["n"] == 25000 and result["dim"] == 64 and result["index"].startswith("IVF")  # auto, past 20,000
    assert result["recall_at_10"] >= 0.9 and result["params"]["nprobe"] >= 1
    assert 0 < result["p50_ms"] <= result["p99_ms"] and result["build_s"] >= 0
    assert result["memory_mb"] == pytest.approx(25000 * 64 * 4 / 1e6, rel=0.2)  # IVF-Flat stores the vectors
    exact, approximate = result["real"]
    assert (
        exact["index"] == "Flat" and exact["recall_at_10"] == 1.0 and exact["n"] == 15437 - 100
    )  # the queries are held out
    assert approximate["index"].startswith("IVF") and approximate["recall_at_10"] >= 0.9
    hybrid = result["hybrid"]  # one query at a time through the search service, in each mode
    assert hybrid["n"] == 3000 and hybrid["passages"] == 3000 and hybrid["lexical_bytes_per_doc"] > 0
    assert all(0 < hybrid[m]["p50_ms"] <= hybrid[m]["p99_ms"] for m in ("dense", "lexical", "hybrid"))
    assert hybrid["ranking"]["mode"] == "hybrid"
    r = run_cli("bench-search", "--n", "1000", "--queries", "10", "--hybrid-docs", "0", env=env)  # STS-B cached now
    assert r.returncode == 0 and r.stdout.startswith("synthetic: n 1,000, dim 64, Flat")
    r = run_cli("bench-search", "--n", "1000", "--dim", "8", "--hybrid-docs", "0", env=env)
    assert r.returncode == 2 and "no correction to reduce dims" in r.stderr


def test_load_mixes_every_request_kind_and_samples_memory(tmp_path):
    env = {"CE_BACKBONE": "hashing", "CE_MODELS_DIR": str(tmp_path / "models")}
    r = run_cli("load", "--seconds", "4", "--clients", "4", "--json", env=env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["errors"] == 0 and result["clients"] == 4 and 3.5 < result["seconds"] < 10
    assert set(result["per_op"]) == {"embed", "similarity", "search", "write", "delete"}
    assert all(op["requests"] > 0 for name, op in result["per_op"].items() if name != "delete")
    assert len(result["rss_mb"]) >= 2 and all(mb > 10 for _, mb in result["rss_mb"])
    assert abs(result["rss_growth_second_half"]) < 0.5


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ({"CE_HOST": "0.0.0.0"}, ["CE_API_KEYS", "CE_ALLOW_UNAUTHENTICATED"]),  # reachable, and no keys
        ({"CE_API_KEYS": '["good-key", " "]'}, ["CE_API_KEYS[1]"]),  # a blank key would let anyone in
        ({"CE_POLING": "cls"}, ["CE_POLING"]),  # a typo, silently ignored until now
    ],
)
def test_serve_refuses_insecure_or_mistyped_settings_at_start_up(env, extra, named):
    r = run_cli("serve", env={**env, **extra}, timeout=60)
    assert r.returncode == 2, r.stderr[-2000:]
    assert all(name in r.stderr for name in named), r.stderr[-2000:]


def test_serving_every_interface_without_keys_is_allowed_when_asked_on_purpose(env, tmp_path):
    port = free_port()
    extra = {"CE_HOST": "0.0.0.0", "CE_ALLOW_UNAUTHENTICATED": "true", "CE_PORT": str(port)}
    proc = start_server({**os.environ, **env, **extra}, f"http://127.0.0.1:{port}")
    try:
        assert httpx.post(f"http://127.0.0.1:{port}/embed", json={"texts": ["open"]}).status_code == 200
    finally:
        stop_server(proc)


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
    from tests.unit.test_retrieval import write_collection

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
    r = run_cli("eval-search", "--data", str(folder), "--correction", "fit", "--method", "whitening", "--alpha", "0.5",
                "--fit-corpus", str(corpus), "--tune-qrels", str(folder), "--json", env=env)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    fitted = json.loads(r.stdout.strip().splitlines()[-1])
    assert fitted["correction"].startswith("whitening-") and fitted["space"] == "search"
    space = fitted["search_space"]
    assert (space["method"], space["shared_with_similarity"], space["tuned_on"]) == ("none", False, "tiny")
    assert space["raw"]["ndcg_at_10"] == [100.0] and fitted["ndcg_at_10"] == fitted["raw_ndcg_at_10"] == 100.0
    out = tmp_path / "tuned.npz"
    r = run_cli("fit", "--corpus", str(corpus), "--method", "whitening", "--alpha", "0.5", "--tune-qrels", str(folder),
                "--out", str(out), env=env)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    search = read_artifact_file(out).extra["search"]
    ranking = ("ranking", "ranking_selection")  # fit also chooses the ranking on the judgments
    chosen_space = {k: v for k, v in search.items() if k not in ranking}
    assert chosen_space == {k: v for k, v in space.items() if k != "correction"}
    assert search["ranking"]["mode"] == "dense" and search["ranking_selection"]["tuned_on"] == "tiny"  # nothing to gain


def test_collections_from_the_command_line_and_a_fit_on_a_collections_own_documents(env, tmp_path, store):
    def listed() -> dict:
        r = run_cli("collections", "list", "--json", env=env)
        assert r.returncode == 0, r.stderr[-2000:]
        return {c["name"]: c for c in map(json.loads, r.stdout.strip().splitlines())}

    assert run_cli("collections", "create", "notes", "--pooling", "cls", env=env).returncode == 0
    again = run_cli("collections", "create", "notes", env=env)
    assert again.returncode == 2 and "exists" in again.stderr
    corpus = tmp_path / "notes.txt"
    corpus.write_text(
        "\n".join(f"the {a} and the {b} near a {c}" for a in WORDS for b in WORDS[::2] for c in WORDS[::4])
    )
    r = run_cli("index", "--corpus", str(corpus), "--collection", "notes", env=env)
    assert r.returncode == 0 and "the store holds 512" in r.stdout, r.stderr[-2000:]
    collections = listed()
    assert collections["default"]["documents"] == 0
    assert (collections["notes"]["documents"], collections["notes"]["pooling"]) == (512, "cls")
    r = run_cli("fit", "--collection", "notes", "--method", "whitening", "--alpha", "0.5", "--dim", "16", "--publish",
                env=env)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    fitted = r.stdout.strip().splitlines()[-1]
    assert fitted.startswith("whitening-") and "published" in r.stderr
    assert listed()["notes"]["correction"] == fitted and listed()["notes"]["open"] is False  # listed from Redis
    artifact = read_artifact_file(tmp_path / "data" / "artifacts" / f"{fitted}.npz")
    assert artifact.corpus.size == 512 and artifact.corpus.source.startswith("collection:notes:")
    assert artifact.out_dim == 16
    r = run_cli("fit", "--collection", "notes", "--method", "auto", env=env)  # judged on STS-B pairs against it
    assert r.returncode == 0 and '"general": "' + fitted in r.stderr, r.stderr[-2000:]
    assert run_cli("fit", "--collection", "nope", env=env).returncode == 2
    assert run_cli("fit", env=env).returncode == 2  # --corpus or --collection
    assert store.get_artifact(artifact.backbone.fingerprint, fitted) is not None
    assert run_cli("collections", "delete", "notes", env=env).returncode == 0
    assert list(listed()) == ["default"]
    assert store.get_artifact(artifact.backbone.fingerprint, fitted) is None  # its own corrections went with it


def test_bench_collections_reports_memory_of_one_two_and_three_collections(tmp_path):
    env = {"CE_BACKBONE": "hashing", "CE_MODELS_DIR": str(tmp_path / "models")}
    r = run_cli("bench-collections", "--docs", "100", "--json", env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["documents_each"] == 100 and result["one_collection_mb"] > 0
    assert 0.9 < result["two_sharing_one_backbone_ratio"] < 1.3  # one encoder for both: only an index more
    assert result["plus_one_on_cls_mb"] >= 0.9 * result["two_sharing_one_backbone_mb"]


def test_spaces_draws_a_collections_documents_coloured_by_a_metadata_field(env, tmp_path):
    docs = tmp_path / "docs.jsonl"
    rows = [{"id": f"d{i}", "text": f"the {a} near the {b}", "metadata": {"topic": a} if i % 5 else {}}
            for i, (a, b) in enumerate((a, b) for a in WORDS[:4] for b in WORDS)]  # fmt: skip
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
