"""`eval-search`: search quality on a judged collection (BEIR layout), raw against the served correction's search
space, exact and on the served index, or searched exactly as /search searches it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import app.cli.options as opts  # `options` names a parameter of the command
from app.cli.offline import judged_sets, offline_backbone, tuning_pairs
from app.core.config import TUNE_PAIRS

if TYPE_CHECKING:
    from app.backbones.base import Backbone
    from app.core.config import Settings
    from app.correction.artifact import CorrectionArtifact


DataOpt = Annotated[Path, typer.Option(help="A BEIR-layout folder: corpus.jsonl, queries.jsonl, qrels/test.tsv.")]
CorrectionOpt = Annotated[
    str,
    typer.Option(
        help="served (the bundled correction of this backbone and pooling), none, fit (fit --method on "
        "--fit-corpus now, its search space on --tune-qrels), or an artifact file."
    ),
]
FitCorpusOpt = Annotated[
    Path | None, typer.Option(help="With --correction fit: the corpus to fit on; default STS-B train.")
]
SpaceOpt = Annotated[
    str, typer.Option(help="search (the space the index serves) or similarity (the one /embed serves).")
]
ModeOpt = Annotated[
    str | None,
    typer.Option(
        help="Search as /search does (documents added as passages to both indexes on a Redis of its own): "
        "dense, lexical, hybrid, or served (the mode /search uses when a request names none); raw_* is dense."
    ),
]
FeedbackDocsOpt = Annotated[
    int | None, typer.Option(min=0, max=20, help="--mode: pseudo-relevance feedback's first results (0: off).")
]
LikeTasksOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="--mode: search this many 'more like this' tasks instead of the queries (a relevant document searched "
        "`like` itself, the others relevant to its query its answers): long queries from a short-query collection.",
    ),
]
FeedbackWeightOpt = Annotated[float | None, typer.Option(min=0.01, max=10, help="--mode: feedback's weight.")]


@opts.guarded
@opts.with_options(opts.method_options)
def eval_search(
    data: DataOpt,
    pooling: opts.PoolingOpt = None,
    correction: CorrectionOpt = "served",
    options: opts.MethodOptions = opts.METHOD_DEFAULTS,
    fit_corpus: FitCorpusOpt = None,
    tune_qrels: opts.TuneQrelsOpt = None,
    space: SpaceOpt = "search",
    mode: ModeOpt = None,
    feedback_docs: FeedbackDocsOpt = None,
    feedback_weight: FeedbackWeightOpt = None,
    like_tasks: LikeTasksOpt = None,
    as_json: opts.JsonOpt = False,
) -> None:
    """NDCG@10, Recall@100 and MRR@10 of search, raw and corrected, exact and on the served index kind (x100,
    each change with a paired-bootstrap 95% interval); documents are encoded once, then cached by content.
    `--correction fit` fits the correction first (on --fit-corpus, its search space on --tune-qrels)."""
    from app.correction.publication import check_compatible
    from app.offline.space_comparison import compare_spaces, comparison_lines

    if like_tasks and mode is None:
        raise opts.fail("--like-tasks searches as /search does: give --mode too", opts.EXIT_BAD_INPUT)
    if space not in ("search", "similarity"):
        raise opts.fail(f"--space is search or similarity, got {space!r}", opts.EXIT_BAD_INPUT)
    settings = opts.settings_for(pooling)
    if mode is not None:
        asked = {"feedback_docs": feedback_docs, "feedback_weight": feedback_weight}
        search = settings.search.model_copy(update={k: v for k, v in asked.items() if v is not None})
        settings = settings.model_copy(update={"search": search})
        return _eval_served(settings, data, mode, correction, as_json, like_tasks)
    backbone = offline_backbone(settings)
    (judged,) = judged_sets(backbone, [data], settings) or []
    artifact = _correction(correction, settings, backbone, options, fit_corpus, tune_qrels)
    if artifact is not None:
        check_compatible(artifact, backbone)
    result = compare_spaces(settings, backbone, judged, artifact, space)
    if not as_json:
        for line in comparison_lines(result):
            typer.echo(line)
    typer.echo(json.dumps(result))


def _correction(
    asked: str, settings: Settings, backbone: Backbone, options: Any, fit_corpus: Path | None, tune_qrels: Any
) -> CorrectionArtifact | None:
    """The correction `--correction` names: fitted now, the bundled one, none, or an artifact file."""
    from app.correction.publication import find_bundled, read_artifact_file
    from app.offline.datasets import read_corpus
    from app.offline.fit import fit_artifact

    if asked == "served":
        return find_bundled(settings.models_dir, backbone)
    if asked == "none":
        return None
    if asked != "fit":
        return read_artifact_file(Path(asked))
    corpus = fit_corpus or TUNE_PAIRS[0]
    return fit_artifact(
        backbone,
        read_corpus(corpus),
        options.method,
        options.params(),
        source=corpus.name,
        tuning=tuning_pairs(backbone, options.method, options.tune_pairs, options.no_tune, settings),
        judged=judged_sets(backbone, tune_qrels, settings),
    )


def _eval_served(
    settings: Settings, data: Path, mode: str, correction: str, as_json: bool, like_tasks: int | None = None
) -> None:
    """`eval-search --mode`: the collection searched through the services /search runs (its queries, or as many
    "more like this" tasks as asked)."""
    from app.offline.like_tasks import like_tasks as tasks_of
    from app.offline.retrieval import read_judged_corpus
    from app.offline.served_search import MODES, evaluate_served

    if mode not in MODES:
        raise opts.fail(f"--mode is one of {', '.join(MODES)}, got {mode!r}", opts.EXIT_BAD_INPUT)
    if correction == "fit":
        raise opts.fail(
            "--mode searches with a served correction: served, none, or an artifact file", opts.EXIT_BAD_INPUT
        )
    collection = read_judged_corpus(data)
    collection = tasks_of(collection, limit=like_tasks) if like_tasks else collection
    figures = evaluate_served(settings, collection, mode, correction=None if correction == "served" else correction)
    result: dict[str, Any] = {"data": Path(data).name, "backbone": settings.backbone, "pooling": settings.pooling}
    result |= {"like_tasks": like_tasks, **figures}
    if not as_json:
        typer.echo(
            f"{result['data']} ({figures['n_queries']} queries, {figures['n_docs']} documents, "
            f"{figures['passages']} passages), {mode}: {figures['ranking']}",
            err=True,
        )
        for metric in ("ndcg_at_10", "recall_at_100", "mrr_at_10"):
            low, high = figures[f"{metric}_change_95"]
            typer.echo(
                f"  {metric}: dense {figures[f'raw_{metric}']:.2f}, {mode} {figures[metric]:.2f} "
                f"(change 95% [{low:+.2f}, {high:+.2f}])",
                err=True,
            )
    typer.echo(json.dumps(result))


@opts.guarded
def compare_rankings(
    data: Annotated[list[Path], typer.Option(help="BEIR-layout folders (repeatable), each added to a service once.")],
    like_tasks: Annotated[
        int,
        typer.Option(
            min=0, help="'More like this' tasks per collection, and as many long queries, beside its queries (0: none)."
        ),
    ] = 200,
    as_json: opts.JsonLastOpt = False,
) -> None:
    """NDCG@10 of the served ranking, calibrated, convex and rrf fusion at lexical weight 0.4, dense and lexical, on
    each collection's queries, on its "more like this" tasks (a relevant document searched like itself) and on the
    same documents' texts sent as long queries (the document stored, judged out of its ranking); each change against
    the served ranking with a paired-bootstrap 95% interval."""
    from app.offline.fusion_study import compare_rankings as study
    from app.offline.retrieval import read_judged_corpus

    found = {folder.name: study(opts.settings_for(), read_judged_corpus(folder), tasks=like_tasks) for folder in data}
    if not as_json:
        for name, parts in found.items():
            for part, table in parts.items():
                cells = ", ".join(
                    f"{k} {v['ndcg_at_10']:.2f} [{v['vs_default_95'][0]:+.2f}, {v['vs_default_95'][1]:+.2f}]"
                    for k, v in table.items()
                    if k != "n"
                )
                typer.echo(f"{name} {part} ({table['n']}): {cells}")
    typer.echo(json.dumps(found))
