"""`report` (methods x poolings, isotropy, plots) and `compare` (every correction, its cost too)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from app.cli.offline import offline_backbone, tuning_pairs
from app.cli.options import (
    EXIT_BAD_INPUT,
    STS_TEST,
    STS_TRAIN,
    FitCorpusOpt,
    FlowSecondsOpt,
    JsonOpt,
    PoolingsOpt,
    TestPairsOpt,
    TuneOpt,
    fail,
    guarded,
    poolings,
    settings_for,
)
from app.core.config import TUNE_PAIRS, get_settings
from app.core.names import Method

if TYPE_CHECKING:
    import numpy as np

    from app.backbones.base import Backbone
    from app.correction.artifact import CorrectionArtifact
    from app.correction.selection import TuningPairs


ReportOutOpt = Annotated[
    Path | None,
    typer.Option(
        help="Folder for report.md and the PNG plots; default CE_DATA_DIR/report (the page shows its pictures)."
    ),
]
AdaptedOpt = Annotated[
    Path | None, typer.Option(help="A model folder from `adapt`: its space is drawn beside raw and corrected.")
]


@guarded
def report(
    out: ReportOutOpt = None,
    adapted: AdaptedOpt = None,
    pooling: PoolingsOpt = None,
    fit_corpus: FitCorpusOpt = STS_TRAIN,
    test_pairs: TestPairsOpt = STS_TEST,
    tune_pairs: TuneOpt = None,
) -> None:
    """Write a Markdown summary (methods x poolings on STS-B test, alignment and uniformity, isotropy) and plots
    to OUT."""
    from app.backbones.huggingface import HuggingFaceBackbone
    from app.benchmarks.geometry import geometry_points
    from app.benchmarks.pooling_report import draw_pooling
    from app.benchmarks.report import PoolingResult, evaluate_methods, write_markdown
    from app.correction import Correction
    from app.offline.datasets import read_corpus, read_pairs
    from app.offline.encoding import encode_all, encode_pairs

    out = out or get_settings().data_dir / "report"
    out.mkdir(parents=True, exist_ok=True)
    corpus, test = read_corpus(fit_corpus), read_pairs(test_pairs)
    results: list[PoolingResult] = []
    plots: dict[str, dict[str, Path]] = {}
    for name in poolings(pooling):
        settings = settings_for(name)
        backbone = offline_backbone(settings)
        vectors = encode_all(backbone, corpus, desc=f"{name}: fitting corpus")
        tuning = tuning_pairs(backbone, Method.AUTO, tune_pairs, False, settings, evaluated=test_pairs)
        test_vectors = encode_pairs(backbone, test, name=test_pairs.name)

        result = evaluate_methods(_fitter(backbone, corpus, vectors, fit_corpus.name, tuning), test_vectors, name)
        results.append(result)
        adapted_vectors = None
        if adapted is not None:
            model = HuggingFaceBackbone(adapted, pooling=name, max_length=settings.max_length)
            adapted_vectors = encode_pairs(model, test, name=f"{test_pairs.name} (adapted)")
        result.geometry = geometry_points(test_vectors, Correction(result.auto), adapted_vectors)
        title = f"{backbone.name}, {name} pooling"
        plots[name] = draw_pooling(out, result, vectors, test, test_vectors, adapted_vectors, title)
        typer.echo(f"{name}: " + ", ".join(f"{k} {v:.2f}" for k, v in result.scores.items()), err=True)
    tune_names = "+".join(Path(f).name for f in (tune_pairs or TUNE_PAIRS))
    sources = {"fit": fit_corpus.name, "tune": tune_names, "test": test_pairs.name}
    path = write_markdown(
        out / "report.md", results, backbone=results[0].auto.backbone.name, sources=sources, plots=plots
    )
    typer.echo(str(path))


@guarded
def spaces(
    color_by: Annotated[str, typer.Option(help="A metadata field; its most common values get a colour each.")],
    collection: Annotated[str, typer.Option(help="The collection whose documents are drawn.")] = "default",
    sample: Annotated[int, typer.Option(min=10, help="How many documents to draw.")] = 2000,
    out: Annotated[
        Path | None, typer.Option(help="Folder for documents-COLLECTION.png; default CE_DATA_DIR/report.")
    ] = None,
) -> None:
    """Pictures of a collection's indexed documents, raw and as served (and as the index holds them, when search
    has its own space), coloured by a metadata field; the page shows them with that collection."""
    from app.benchmarks.pictures import field_labels, plot_spaces
    from app.offline.collection_fit import stored_documents
    from app.services.container import Services

    services = Services.from_settings(settings_for(), search=False)
    try:
        chosen = services.collections.get(collection)
        served = chosen.services.served
        docs, raw = stored_documents(served.builder.store, served.collection_key, served.builder.raw_dim, sample)
        if len(docs) < 10:
            raise fail(f"collection {collection!r} holds {len(docs)} documents; drawing needs 10", EXIT_BAD_INPUT)
        values = [json.loads(d.metadata_json).get(color_by) for d in docs]
        if all(v is None for v in values):
            raise fail(f"no document of {collection!r} has a metadata field {color_by!r}", EXIT_BAD_INPUT)
        correction, drawn = served.current.correction, {"raw": raw}
        if correction is not None:
            drawn[f"corrected ({correction.artifact.method})"] = served.builder.vectors.in_space(
                docs, correction, search=False
            )
            if correction.search is not correction:
                drawn["search space"] = served.builder.vectors.in_space(docs, correction)
        backbone = chosen.engine.backbone
        folder = out or get_settings().data_dir / "report"
        folder.mkdir(parents=True, exist_ok=True)
        title = f"{collection}: {backbone.name}, {len(docs)} documents by {color_by}"
        path = plot_spaces(folder / f"documents-{collection}.png", drawn, *field_labels(values), title)
    finally:
        services.close()
    typer.echo(str(path))


@guarded
def compare(
    pooling: PoolingsOpt = None,
    fit_corpus: FitCorpusOpt = STS_TRAIN,
    test_pairs: TestPairsOpt = STS_TEST,
    tune_pairs: TuneOpt = None,
    method: Annotated[
        list[str] | None, typer.Option(help="Only these methods (repeatable: none, center, abtt, whitening, ...).")
    ] = None,
    flow_seconds: FlowSecondsOpt = 600.0,
    as_json: JsonOpt = False,
) -> None:
    """Every correction (none, center, ABTT, whitening, auto, flow, SIF) x poolings: Spearman, dims, fit and
    apply cost, as one Markdown table."""
    from app.benchmarks.compare import COMPARE_METHODS, as_records, compare_pooling, markdown_table
    from app.offline.datasets import read_corpus, read_pairs
    from app.offline.encoding import corrected_vectors, encode_all

    methods = [m for m in COMPARE_METHODS if not method or m[1] in method]
    known = [name for _, name, _ in COMPARE_METHODS]
    unknown = sorted(set(method or []) - set(known))
    if unknown:
        raise fail(f"unknown method {unknown[0]!r}; choose from {', '.join(known)}", EXIT_BAD_INPUT)
    corpus, test = read_corpus(fit_corpus), read_pairs(test_pairs)
    needs_tuning = any(m == Method.AUTO for _, m, _ in methods)
    rows = []
    for name in poolings(pooling):
        settings = settings_for(name)
        backbone = offline_backbone(settings)
        vectors = encode_all(backbone, corpus, desc=f"{name}: fitting corpus")
        tuning = tuning_pairs(backbone, Method.AUTO, tune_pairs, not needs_tuning, settings, evaluated=test_pairs)
        test_raw = encode_all(backbone, test.left + test.right, desc=f"{name}: test pairs")

        fit = _fitter(backbone, corpus, vectors, fit_corpus.name, tuning, flow_seconds=flow_seconds)
        correct = partial(corrected_vectors, backbone, progress=False)
        rows += compare_pooling(name, fit, correct, test, test_raw, methods)
        typer.echo(f"{name}: " + ", ".join(f"{r.label} {r.spearman:.2f}" for r in rows if r.pooling == name), err=True)
    if as_json:
        typer.echo(json.dumps({"fit": fit_corpus.name, "test": test_pairs.name, "rows": as_records(rows)}))
    else:
        typer.echo(markdown_table(rows))


def _fitter(
    backbone: Backbone,
    corpus: list[str],
    vectors: np.ndarray,
    source: str,
    tuning: TuningPairs | None,
    *,
    flow_seconds: float | None = None,
) -> Callable[[str, dict[str, Any]], CorrectionArtifact]:
    """`fit(method, params)` on one pooling's encoded corpus, as the report and the comparison fit every method."""
    from app.offline.fit import fit_from_vectors

    def fit(method: str, params: dict[str, Any]) -> CorrectionArtifact:
        if method == Method.FLOW and flow_seconds is not None:
            params = {**params, "max_seconds": flow_seconds}
        return fit_from_vectors(backbone, corpus, vectors, method, params, source, tuning=tuning)

    return fit
