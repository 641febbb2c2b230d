"""`python -m app`: serve, fit, index and eval, all through the same service code as the API."""

from __future__ import annotations

import sys

import typer

from app.cli.adaptation import adapt_backbone
from app.cli.backups import export_collection, import_collection
from app.cli.benchmarks import (
    bench,
    bench_architectures,
    bench_cluster,
    bench_collections,
    bench_depth,
    bench_int8,
    bench_search,
    bench_shards,
    load,
)
from app.cli.collections import collections
from app.cli.corrections import evaluate, fit, isotropy
from app.cli.export import export_onnx
from app.cli.integrity import verify
from app.cli.ranking import known_items, tune
from app.cli.reports import compare, report, spaces
from app.cli.search_eval import compare_rankings, eval_search
from app.cli.serve import index_documents, serve
from app.cli.service_benchmarks import bench_fairness, bench_tune, eval_http
from app.cli.settings_docs import settings
from app.cli.store import copy_store
from app.core.settings_table import help_text

cli = typer.Typer(
    help="Corrected sentence embeddings: fit a correction offline, evaluate it, index documents, serve.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# In the order `--help` lists them: serving first, then the offline work, then the measurements.
cli.command("serve", epilog=help_text())(serve)
for name, command in (
    ("settings", settings),
    ("fit", fit),
    ("index", index_documents),
    ("verify", verify),
    ("export", export_collection),
    ("import", import_collection),
    ("copy-store", copy_store),
    ("eval", evaluate),
    ("eval-search", eval_search),
    ("compare-rankings", compare_rankings),
    ("eval-http", eval_http),
    ("known-items", known_items),
    ("tune", tune),
    ("isotropy", isotropy),
    ("adapt", adapt_backbone),
    ("export-onnx", export_onnx),
    ("report", report),
    ("spaces", spaces),
    ("compare", compare),
    ("bench", bench),
    ("load", load),
    ("bench-search", bench_search),
    ("bench-depth", bench_depth),
    ("bench-architectures", bench_architectures),
    ("bench-int8", bench_int8),
    ("bench-shards", bench_shards),
    ("bench-cluster", bench_cluster),
    ("bench-collections", bench_collections),
    ("bench-fairness", bench_fairness),
    ("bench-tune", bench_tune),
):
    cli.command(name)(command)
cli.add_typer(collections, name="collections")


def main() -> None:
    """Console entry point."""
    try:
        cli()
    except KeyboardInterrupt:
        sys.exit(130)
