"""`bench-fairness` (the largest bodies against everyone else), `bench-tune` (a judged collection tuned over HTTP)
and `eval-http` (one evaluated over HTTP): a fresh service measured from outside, as its users would meet it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from app.cli.options import STS_DEV, JsonLastOpt, guarded
from app.core.config import get_settings


@guarded
def bench_fairness(
    clients: Annotated[int, typer.Option(min=1, help="Large requests sent at once beside the probe client.")] = 1,
    deadline: Annotated[float, typer.Option(min=1, help="CE_REQUEST_TIMEOUT of the server timing a 504.")] = 5,
    as_json: JsonLastOpt = False,
) -> None:
    """The largest bodies against everyone else: 256 documents of 20,000 characters (413 at once, or 201 in time);
    the largest allowed request while another client sends short /embed (its p99 and 429s, against quiet); a 504's
    texts left unencoded; resident memory before, after and 5 s later."""
    from app.benchmarks.fairness import (
        after_deadline,
        beside_large_requests,
        largest_allowed,
        long_documents,
        maximum_body,
    )
    from app.benchmarks.http import running_service
    from app.offline.datasets import read_corpus

    settings = get_settings()
    words = " ".join(read_corpus(STS_DEV)).split()
    docs = long_documents(settings.max_texts, settings.max_text_chars, words, seed=0)
    with running_service(reuse=[settings.graphs_dir]) as (url, pid):
        typer.echo(f"{len(docs)} documents of {settings.max_text_chars:,} characters ...", err=True)
        maximum = maximum_body(url, docs)
        allowed = largest_allowed(url, docs, maximum["tokens"]) if maximum["tokens"] else docs
        typer.echo(f"{clients} x {len(allowed)} documents beside a client's short /embed ...", err=True)
        beside = beside_large_requests(url, pid, allowed, clients)
    with running_service({"CE_REQUEST_TIMEOUT": f"{deadline:g}"}, reuse=[settings.graphs_dir]) as (url, _pid):
        typer.echo(f"the same request on a server with a {deadline:g} s deadline ...", err=True)
        late = after_deadline(url, allowed)
    result = {"maximum_body": maximum, **beside, "after_504": late, "round_tokens": settings.round_tokens}
    if not as_json:
        quiet, busy, rss = beside["probe_quiet"], beside["probe_beside"], beside["rss_mb"]
        typer.echo(
            f"maximum body ({len(docs)} x {settings.max_text_chars:,} characters, {maximum['tokens'] or '?':,} "
            f"tokens): {maximum['status']} in {maximum['seconds']} s\n"
            f"{clients} x {len(allowed)} documents: "
            + ", ".join(f"{a['status']} in {a['seconds']} s" for a in beside["large_requests"])
            + f"\nshort /embed beside them: {busy['requests']} requests, p50 {busy['p50_ms']} ms, p99 {busy['p99_ms']} "
            f"ms (quiet: p50 {quiet['p50_ms']}, p99 {quiet['p99_ms']}; {beside['p99_ratio']}x), "
            f"{busy['shed_429']} x 429, {busy['errors']} errors\n"
            f"after a 504 ({late['status']} in {late['seconds']} s): {late['encoded_before_504']} texts encoded "
            f"before, {late['encoded_in_5s_after']} in 5 s after (a round: {settings.round_tokens:,} tokens at most), "
            f"{late['dropped']} dropped\n"
            f"server RSS: {rss['before']} MB before, {rss['after']} MB after, {rss['5s_later']} MB 5 s later"
        )
    typer.echo(json.dumps(result))


@guarded
def bench_tune(
    data: Annotated[Path, typer.Option(help="A BEIR-layout collection: its documents and judgments are posted.")],
    as_json: JsonLastOpt = False,
) -> None:
    """Tune a fresh service's ranking over HTTP on a judged collection: documents and judgments posted, POST
    /collections/default/tune, then the choice and both rankings' NDCG@10 and Recall@100 on the held-out queries."""
    from app.benchmarks.http import running_service
    from app.benchmarks.tuning import tune_over_http
    from app.offline.retrieval import read_judged_corpus

    collection = read_judged_corpus(data)
    with running_service({"CE_MAX_TEXT_CHARS": "1000000"}, reuse=[get_settings().graphs_dir]) as (url, _pid):
        typer.echo(f"{len(collection.doc_ids):,} documents, {len(collection.query_ids)} judged queries ...", err=True)
        result = tune_over_http(url, collection)
    if not as_json:
        chosen, held = result.get("ranking") or {}, result.get("held_out") or {}
        typer.echo(
            f"{result['state']}: {result.get('reason')}; chose {chosen.get('mode')} "
            f"{chosen.get('fusion') or ''} {chosen.get('lexical_weight') or ''} on {result.get('queries')}; "
            f"held out: {held}; tuned in {result['tune_seconds']} s"
        )
    typer.echo(json.dumps(result))


@guarded
def eval_http(
    data: Annotated[Path, typer.Option(help="A BEIR-layout collection: documents posted, queries searched.")],
    clients: Annotated[int, typer.Option(min=1, help="Clients posting documents and searching at once.")] = 8,
    runs: Annotated[int, typer.Option(min=1, help="Fresh services the evaluation runs on, in turn.")] = 2,
    mode: Annotated[str | None, typer.Option(help="dense, lexical or hybrid; default: as /search ranks.")] = None,
    as_json: JsonLastOpt = False,
) -> None:
    """NDCG@10, Recall@100, MRR@10 of a fresh service over HTTP: documents posted by --clients at once, every query
    through POST /search; run --runs times on fresh services, and whether every run ranked every query the same."""
    from app.benchmarks.http import running_service
    from app.benchmarks.http_evaluation import BATCH, evaluate_over_http
    from app.offline.retrieval import DEPTH, read_judged_corpus

    collection, settings = read_judged_corpus(data), get_settings()
    limits = {"batch": min(BATCH, settings.max_texts), "depth": min(DEPTH, settings.max_k)}
    results = []
    for run in range(runs):
        with running_service({"CE_MAX_TEXT_CHARS": "1000000"}, reuse=[settings.graphs_dir]) as (url, _pid):
            typer.echo(f"run {run + 1}: {len(collection.doc_ids):,} documents by {clients} clients ...", err=True)
            results.append(evaluate_over_http(url, collection, clients, mode, **limits))
        if not as_json:
            typer.echo(f"run {run + 1}: " + ", ".join(f"{k} {v}" for k, v in results[-1].items()))
    same = len({r["rankings_sha256"] for r in results}) == 1
    if not as_json:
        typer.echo(f"{runs} runs: " + ("every query ranked the same" if same else "rankings DIFFER between runs"))
    typer.echo(json.dumps({"data": data.name, "runs": results, "identical": same}))
