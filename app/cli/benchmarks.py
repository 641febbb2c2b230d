"""`bench` (throughput over HTTP), `load` (mixed clients over time), `bench-search` (the index at scale),
`bench-shards` (the index split over Ray nodes), `bench-collections` (memory of collections), `bench-depth` (deep
pages), `bench-architectures` (model folders against sentence-transformers) and `bench-int8` (quantized forms)."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from app.backbones import build_backbone
from app.cli.options import EXIT_BAD_INPUT, STS_DEV, STS_TEST, JsonLastOpt, fail, guarded
from app.core.config import STS_DIR, get_settings


@guarded
def bench(
    texts: Annotated[int, typer.Option(min=64, help="STS-B sentences sent in each load pattern.")] = 2000,
    as_json: JsonLastOpt = False,
) -> None:
    """Throughput and latency of the service over HTTP, as ratios to the backbone called in-process."""
    from app.benchmarks.service import bench_lines, run_bench
    from app.offline.datasets import read_corpus

    sentences = (read_corpus(STS_TEST) + read_corpus(STS_DEV))[:texts]
    result = run_bench(get_settings(), sentences, partial(typer.echo, err=True))
    if not as_json:
        for line in bench_lines(result):
            typer.echo(line)
    typer.echo(json.dumps(result))


@guarded
def load(
    seconds: Annotated[float, typer.Option(min=1, help="How long the clients keep sending.")] = 60,
    clients: Annotated[int, typer.Option(min=1, help="Concurrent clients, each on a keep-alive connection.")] = 32,
    url: Annotated[
        str | None, typer.Option(help="A running service to load (RSS is then not sampled); default: start one.")
    ] = None,
    as_json: JsonLastOpt = False,
) -> None:
    """Mixed load (embed, similarity, search, document writes and deletes): errors, p50/p99, RSS over time."""
    from contextlib import nullcontext

    from app.benchmarks.http import running_service
    from app.benchmarks.load import run_load
    from app.offline.datasets import read_corpus

    texts = read_corpus(STS_DEV)
    with nullcontext((url, None)) if url else running_service() as (target, pid):
        typer.echo(f"{clients} clients for {seconds:g} s against {target} ...", err=True)
        result = run_load(target, pid, texts, seconds=seconds, clients=clients)
    if not as_json:
        typer.echo(
            f"{result['requests']} requests in {result['seconds']} s: {result['errors']} errors, "
            f"{result['shed_429']} shed with 429"
        )
        for op, figures in result["per_op"].items():
            typer.echo(
                f"  {op:<10} {figures['requests']:>6} requests, p50 {figures['p50_ms']} ms, "
                f"p99 {figures['p99_ms']} ms, errors {figures['errors']}, 429 {figures['shed_429']}"
            )
        if "rss_growth_second_half" in result:
            series = ", ".join(f"{t:g}s {mb:.0f}" for t, mb in result["rss_mb"][::5])
            typer.echo(f"  server RSS MB: {series}; second half growth {result['rss_growth_second_half']:+.1%}")
    typer.echo(json.dumps(result))


@guarded
def bench_search(
    n: Annotated[int, typer.Option(min=1000, help="Synthetic documents to index.")] = 1_000_000,
    dim: Annotated[
        int | None, typer.Option(min=2, help="Corrected dims (refits the bundled whitening); default: as served.")
    ] = None,
    queries: Annotated[int, typer.Option(min=10, help="Queries, timed one at a time on one thread.")] = 1000,
    index: Annotated[str | None, typer.Option(help="FAISS factory string; default: CE_INDEX_FACTORY.")] = None,
    hybrid_docs: Annotated[
        int, typer.Option(min=0, help="Documents for the dense / lexical / hybrid latency through the search service.")
    ] = 100_000,
    as_json: JsonLastOpt = False,
) -> None:
    """recall@10, latency, build time and memory of the search index against exact search, unfiltered and with
    filters letting 50%, 1% and 0.01% through; then one short query at a time through the search service in each
    mode, on --hybrid-docs documents.

    Synthetic documents come from a Gaussian mixture fitted on the backbone's corrected vectors of
    every STS-B sentence; the same figures follow on those real sentences (1,000 held out as queries).
    """
    from app.benchmarks import hybrid
    from app.benchmarks.search import run

    settings = get_settings()
    try:
        result = run(settings, STS_DIR, n=n, dim=dim, queries=queries, factory=index or settings.index_factory)
    except ValueError as exc:
        raise fail(str(exc), EXIT_BAD_INPUT) from None
    if hybrid_docs:
        result["hybrid"] = modes = hybrid.run(settings, STS_DIR, n=hybrid_docs)
        typer.echo(
            f"search service, {hybrid_docs:,} documents, one short query: "
            + ", ".join(f"{m} p50 {modes[m]['p50_ms']} ms / p99 {modes[m]['p99_ms']} ms" for m in hybrid.MODES)
            + f" (feedback: {modes['feedback_p50_ratio']}x hybrid's p50)"
            f"; lexical index {modes['lexical_bytes_per_doc']:.0f} bytes per document; Redis "
            f"{modes['redis_bytes_per_doc']:,} bytes per document",
            err=True,
        )
    if not as_json:
        from app.benchmarks.search import SearchFigures

        fields = SearchFigures.__dataclass_fields__
        for figures in [result, *result["real"]]:
            typer.echo(SearchFigures(**{k: figures[k] for k in fields}).row())
        for f in result["filtered"]:
            typer.echo(
                f"filter {f['filter']} ({f['documents']:,} documents): recall@10 {f['recall_at_10']}, p50 "
                f"{f['search_p50_ms']} ms = {f['p50_vs_unfiltered']}x unfiltered"
                f" (+ {f['filter_p50_ms']} ms to evaluate)"
            )
    typer.echo(json.dumps(result))


@guarded
def bench_depth(
    documents: Annotated[int, typer.Option(min=1000, help="STS-B train sentences indexed as documents.")] = 2000,
    queries: Annotated[int, typer.Option(min=5, help="Held-out sentences asked, each at every k and mode.")] = 50,
    as_json: JsonLastOpt = False,
) -> None:
    """p50 of POST /search at k = 10, 100 and 1,000 in each mode, on a fresh service over HTTP (the default backbone),
    each with its ratio to k = 10 in the same run."""
    from app.benchmarks import depth

    settings = get_settings()
    result = depth.run(STS_DIR, documents, queries, {"CE_BACKBONE": settings.backbone}, [settings.graphs_dir])
    if not as_json:
        typer.echo(f"{result['documents']:,} documents, {result['queries']} queries, p50 of POST /search:")
        for mode, p50 in result["p50_ms"].items():
            ratios = result["vs_k10"][mode]
            typer.echo(f"  {mode:<8}" + "".join(f"  k={k}: {ms} ms ({ratios[k]}x)" for k, ms in p50.items()))
    typer.echo(json.dumps(result))


@guarded
def bench_architectures(as_json: JsonLastOpt = False) -> None:
    """Each served encoder architecture as a tiny random sentence-transformers folder, against sentence-transformers
    itself: the lowest cosine on torch, ONNX fp32 and the default backbone (int8 where its check holds); the table of
    docs/serve-your-model.md."""
    from app.benchmarks.architectures import run, table

    rows = run()
    if not as_json:
        for line in table(rows):
            typer.echo(line)
    typer.echo(json.dumps(rows))


@guarded
def bench_int8(
    texts: Annotated[int, typer.Option(min=100, help="STS-B test sentences encoded by each form.")] = 2000,
    as_json: JsonLastOpt = False,
) -> None:
    """The default graph's quantized forms in-process (fp32; int8 on fixed scales, as served; int8 dynamic; int8
    static QDQ): sentences/s, lowest centred cosine to fp32, batch independence; beside the CPU's int8 instructions."""
    import tempfile

    from app.backbones.onnx import OnnxBackbone
    from app.benchmarks.int8_forms import run
    from app.offline.datasets import read_corpus

    settings = get_settings()
    build_backbone(settings.model_copy(update={"backbone": "onnx", "quantize": "none"}))  # its fp32 graph
    backbone = build_backbone(settings.model_copy(update={"backbone": "onnx", "quantize": "int8"}))
    if not isinstance(backbone, OnnxBackbone):
        raise TypeError(f"the onnx backbone built a {type(backbone).__name__}")
    with tempfile.TemporaryDirectory() as work:
        result = run(backbone, read_corpus(STS_TEST)[:texts], Path(work))
    if not as_json:
        typer.echo(f"CPU: {result['cpu']['model']}; int8 instructions: {', '.join(result['cpu']['int8_instructions'])}")
        for form in result["forms"]:
            typer.echo(
                f"  {form['form']:<28} {form['sentences_per_s']:>7.1f} sentences/s, lowest centred cosine to fp32 "
                f"{form['lowest_centred_cosine_to_fp32']}, alone vs batched {form['batch_independence']}"
            )
    typer.echo(json.dumps(result))


@guarded
def bench_shards(
    n: Annotated[int, typer.Option(min=1000, help="Synthetic documents stored in Redis and split into shards.")] = (
        1_000_000
    ),
    shards: Annotated[int, typer.Option(min=1, help="Shards (Ray Serve deployments), by document id.")] = 4,
    nodes: Annotated[int, typer.Option(min=1, help="Ray node processes of the local cluster.")] = 3,
    queries: Annotated[int, typer.Option(min=10, help="Queries, one at a time.")] = 1000,
    as_json: JsonLastOpt = False,
) -> None:
    """Flat shards on a local Ray cluster against one exact index over the same stored documents: how many of
    the queries get the same top-10, p50/p99 of both; then one shard's process killed and its return timed.

    Needs the `ray` extra. Documents come from the Gaussian mixture `bench-search` uses."""
    from app.benchmarks.shards import run

    result = run(get_settings(), STS_DIR, n=n, shards=shards, nodes=nodes, queries=queries)
    if not as_json:
        kill = result["kill"]
        typer.echo(
            f"{result['n']:,} documents in {result['shards']} shards on {result['shard_nodes']} of {result['nodes']} "
            f"nodes: same top-10 as one exact index for {result['same_top10']:,} of {result['queries']:,} queries; "
            f"p50 {result['sharded']['p50_ms']} ms sharded, {result['single']['p50_ms']} ms in one process; shard "
            f"{kill['shard']} killed: {kill['partial_answers']} of {kill['searches_meanwhile']} answers partial, "
            f"whole again after {kill['seconds_until_whole']} s; {result['documents_after']:,} documents held"
        )
    typer.echo(json.dumps(result))


@guarded
def bench_cluster(
    n: Annotated[int, typer.Option(min=1000, help="Documents sent through the API to each server.")] = 1_000_000,
    queries: Annotated[int, typer.Option(min=10, help="Queries in each mode, one at a time.")] = 1000,
    nodes: Annotated[int, typer.Option(min=1, help="Ray node processes of the local cluster.")] = 3,
    clients: Annotated[int, typer.Option(min=1, help="Clients posting each server's documents at once.")] = 4,
    as_json: JsonLastOpt = False,
) -> None:
    """A collection kept in 3 parts on a local Redis Cluster (3 primaries, a replica each) and searched by shards
    on a local Ray cluster, against the same collection in one process (both exact, Flat): the same documents through
    the API to both by several clients at once, their top-10 compared in each mode, ingestion rates and p50/p99 side
    by side. Backbone: CE_BACKBONE."""
    from app.benchmarks.cluster import run

    result = run(get_settings(), STS_DIR, n=n, queries=queries, nodes=nodes, clients=clients)
    if not as_json:
        same, rates = result["same_top10"], result["ingest_docs_per_s"]
        typer.echo(
            f"{result['n']:,} documents: same top-10 as one process for "
            + ", ".join(f"{same[m]:,}/{result['queries']:,} {m}" for m in same)
            + f" (hybrid within 1e-4: {result['same_top10_within_1e-4']['hybrid']:,})"
            + f"; ingestion {rates['cluster']:,} docs/s on the cluster, {rates['single']:,} in one process; "
            + "; ".join(
                f"{m} p50 {lat['cluster']['p50']} vs {lat['single']['p50']} ms"
                for m, lat in result["latency_ms"].items()
            )
        )
    typer.echo(json.dumps(result))


@guarded
def bench_collections(
    docs: Annotated[int, typer.Option(min=100, help="STS-B sentences indexed into each collection.")] = 2000,
    as_json: JsonLastOpt = False,
) -> None:
    """Resident memory of one collection, two sharing a backbone, and one more on another pooling."""
    from app.benchmarks.collections import run_collections
    from app.benchmarks.http import running_service
    from app.offline.datasets import read_corpus

    texts = list(dict.fromkeys(read_corpus(STS_TEST)))[:docs]
    with running_service(reuse=[get_settings().graphs_dir]) as (url, pid):
        result = run_collections(url, pid, texts)
    if not as_json:
        typer.echo(", ".join(f"{k} {v}" for k, v in result.items()))
    typer.echo(json.dumps(result))
