"""`fit` a correction, `eval` it on labelled pairs, measure a corpus's `isotropy`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from app.cli.offline import fit_here_or_on_ray, judged_sets, offline_backbone, tuning_pairs
from app.cli.options import (
    EXIT_BAD_ARTIFACT,
    EXIT_BAD_INPUT,
    AddressOpt,
    CorpusOpt,
    EngineOpt,
    JsonOpt,
    MethodOptions,
    PoolingOpt,
    TuneQrelsOpt,
    WorkersOpt,
    fail,
    guarded,
    method_options,
    settings_for,
    with_options,
)
from app.correction.isotropy import POSITIVE_GOLD, alignment_uniformity


@guarded
@with_options(method_options)
def fit(
    corpus: Annotated[
        Path | None, typer.Option(help="One sentence per line, or a pairs file (both sides used).")
    ] = None,
    collection: Annotated[
        str | None,
        typer.Option(
            help="Fit on this collection's stored documents instead (nothing re-encoded); `auto` keeps "
            "the general correction unless labelled pairs show a clear gain; --publish serves it there."
        ),
    ] = None,
    pooling: PoolingOpt = None,
    options: MethodOptions = None,
    out: Annotated[Path | None, typer.Option(help="Artifact file; default DATA_DIR/artifacts/ID.npz.")] = None,
    publish: Annotated[bool, typer.Option(help="Also publish to Redis as the current correction.")] = False,
    tune_qrels: TuneQrelsOpt = None,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = 2,
) -> None:
    """Fit a correction (and the space search uses) on a corpus and write it as an artifact; prints its id."""
    if (corpus is None) == (collection is None):
        raise fail("give --corpus or --collection", EXIT_BAD_INPUT)
    if collection is not None:
        from app.cli.collections import fit_collection

        return fit_collection(collection, options.method, options.params(), options, tune_qrels, out, publish)
    from app.correction.registry import publish as publish_artifact
    from app.correction.registry import write_artifact_file
    from app.offline.datasets import read_corpus

    settings = settings_for(pooling)
    params = options.params()
    sentences = read_corpus(corpus)
    backbone = offline_backbone(settings)
    tuning = tuning_pairs(backbone, options.method, options.tune_pairs, options.no_tune, settings)
    judged = judged_sets(backbone, tune_qrels, settings)
    artifact = fit_here_or_on_ray(
        settings, backbone, sentences, options.method, params, corpus.name, tuning, engine, address, workers, judged
    )
    if tune_qrels:  # the ranking too: dense, lexical or fused, under the same never-worse guard
        from app.offline.ranking_tuning import with_tuned_ranking

        artifact = with_tuned_ranking(settings, artifact, tune_qrels)
    path = write_artifact_file(artifact, out or settings.data_dir / "artifacts" / f"{artifact.id}.npz")
    typer.echo(f"wrote {path}", err=True)
    if publish:
        from app.services.container import connect_store

        store, embedded = connect_store(settings)
        try:
            publish_artifact(store, artifact)
        finally:
            store.close()
            if embedded:
                embedded.stop()
        typer.echo(f"published {artifact.id} as current for backbone {backbone.fingerprint}", err=True)
    typer.echo(artifact.id)


@guarded
@with_options(method_options)
def evaluate(
    pairs: Annotated[Path, typer.Option(help="Labelled pairs: STS-benchmark layout or s1<TAB>s2<TAB>score.")],
    fit_corpus: Annotated[
        Path | None, typer.Option(help="Corpus to fit on; default: the evaluated pairs' own sentences.")
    ] = None,
    pooling: PoolingOpt = None,
    options: MethodOptions = None,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = 2,
    as_json: JsonOpt = False,
    positive_gold: Annotated[
        float,
        typer.Option(help="Pairs whose gold score is at least this are the paraphrases alignment is measured on."),
    ] = POSITIVE_GOLD,
) -> None:
    """Spearman x100 of cosine vs gold scores, raw and corrected, with the space's alignment and uniformity
    (`--engine ray` fits on Ray)."""
    from app.correction import Correction
    from app.offline.datasets import read_corpus, read_pairs
    from app.offline.evaluation import spearman_x100
    from app.offline.fit import corrected_vectors, encode_all, fit_from_vectors

    settings = settings_for(pooling)
    method, params = options.method, options.params()
    data = read_pairs(pairs)
    backbone = offline_backbone(settings)
    tuning = tuning_pairs(backbone, method, options.tune_pairs, options.no_tune, settings, evaluated=pairs)
    n, texts = len(data), data.left + data.right
    vectors = encode_all(backbone, texts, desc="eval pairs")
    if fit_corpus is None and engine == "local":
        corpus = texts
        artifact = fit_from_vectors(backbone, corpus, vectors, method, params, tuning=tuning)
    else:
        corpus = read_corpus(fit_corpus) if fit_corpus else texts
        source = fit_corpus.name if fit_corpus else pairs.name
        artifact = fit_here_or_on_ray(settings, backbone, corpus, method, params, source, tuning, engine, address,
                                      workers)  # fmt: skip
    corrected = corrected_vectors(backbone, Correction(artifact), texts, vectors, desc="eval pairs")
    raw_geometry = alignment_uniformity(vectors[:n], vectors[n:], data.scores, texts, gold=positive_gold)
    geometry = alignment_uniformity(corrected[:n], corrected[n:], data.scores, texts, gold=positive_gold)
    result = {
        "raw_spearman": round(spearman_x100(vectors[:n], vectors[n:], data.scores), 2),
        "corrected_spearman": round(spearman_x100(corrected[:n], corrected[n:], data.scores), 2),
        "raw_alignment": raw_geometry["alignment"],
        "raw_uniformity": raw_geometry["uniformity"],
        "alignment": geometry["alignment"],
        "uniformity": geometry["uniformity"],
        "positive_pairs": geometry["positive_pairs"],
        "n_pairs": n,
        "pooling": backbone.pooling,
        "method": artifact.method,
        "params": artifact.params,
        "dim": artifact.out_dim,
        "selection": artifact.extra.get("selection"),
        "fit_corpus_size": len(corpus),
        "backbone": backbone.name,
    }
    if as_json:
        typer.echo(json.dumps(result))
    else:
        typer.echo(
            f"{backbone.name} {backbone.pooling} on {pairs.name} ({n} pairs): raw {result['raw_spearman']:.2f}, "
            f"{artifact.method} {artifact.params} (dim {artifact.out_dim}) {result['corrected_spearman']:.2f}; "
            f"alignment {result['raw_alignment']:.3f} -> {result['alignment']:.3f}, uniformity "
            f"{result['raw_uniformity']:.3f} -> {result['uniformity']:.3f} (lower is better)"
        )


@guarded
def isotropy(
    corpus: CorpusOpt,
    artifact: Annotated[
        Path | None, typer.Option(help="Correction to measure; default the bundled one for this backbone.")
    ] = None,
    pooling: PoolingOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """How isotropic the corpus's vectors are, raw and corrected: cosine of random pairs, IsoScore, I(W), rank."""
    from app.correction import Correction
    from app.correction.isotropy import isotropy_report
    from app.correction.registry import check_compatible, find_bundled, read_artifact_file
    from app.offline.datasets import read_corpus
    from app.offline.fit import ISOTROPY_SAMPLE, corrected_vectors, encode_all, sample_rows

    settings = settings_for(pooling)
    sentences = read_corpus(corpus)
    backbone = offline_backbone(settings)
    fitted = read_artifact_file(artifact) if artifact else find_bundled(settings.models_dir, backbone)
    if fitted is None:
        raise fail(f"no correction for {backbone.name}/{backbone.pooling}; pass --artifact", EXIT_BAD_ARTIFACT)
    check_compatible(fitted, backbone)
    texts = list(sample_rows(np.asarray(sentences, dtype=object), ISOTROPY_SAMPLE))
    vectors = encode_all(backbone, texts, desc="corpus")
    result = {
        "corpus": corpus.name,
        "pooling": backbone.pooling,
        "correction": fitted.id,
        "raw": isotropy_report(vectors),
        "corrected": isotropy_report(corrected_vectors(backbone, Correction(fitted), texts, vectors)),
    }
    if as_json:
        typer.echo(json.dumps(result))
        return
    typer.echo(f"{backbone.name} {backbone.pooling} on {corpus.name} ({len(vectors)} texts), correction {fitted.id}")
    typer.echo(f"{'figure':<22}{'raw':>10}{'corrected':>12}")
    for key, value in result["raw"].items():
        typer.echo(f"{key:<22}{value:>10}{result['corrected'][key]:>12}")


@guarded
@with_options(method_options)
def eval_search(
    data: Annotated[Path, typer.Option(help="A BEIR-layout folder: corpus.jsonl, queries.jsonl, qrels/test.tsv.")],
    pooling: PoolingOpt = None,
    correction: Annotated[
        str,
        typer.Option(
            help="served (the bundled correction of this backbone and pooling), none, fit (fit --method on "
            "--fit-corpus now, its search space on --tune-qrels), or an artifact file."
        ),
    ] = "served",
    options: MethodOptions = None,
    fit_corpus: Annotated[
        Path | None, typer.Option(help="With --correction fit: the corpus to fit on; default STS-B train.")
    ] = None,
    tune_qrels: TuneQrelsOpt = None,
    space: Annotated[
        str, typer.Option(help="search (the space the index serves) or similarity (the one /embed serves).")
    ] = "search",
    mode: Annotated[
        str | None,
        typer.Option(
            help="Search as /search does (documents added as passages to both indexes on a Redis of its own): "
            "dense, lexical, hybrid, or served (the mode /search uses when a request names none); raw_* is dense."
        ),
    ] = None,
    feedback_docs: Annotated[
        int | None, typer.Option(min=0, max=20, help="--mode: pseudo-relevance feedback's first results (0: off).")
    ] = None,
    feedback_weight: Annotated[float | None, typer.Option(min=0.01, max=10, help="--mode: feedback's weight.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """NDCG@10, Recall@100 and MRR@10 of search, raw and corrected, exact and on the served index kind (x100,
    each change with a paired-bootstrap 95% interval); documents are encoded once, then cached by content.
    `--correction fit` fits the correction first (on --fit-corpus, its search space on --tune-qrels)."""
    from app.correction import Correction
    from app.correction.registry import check_compatible, find_bundled, read_artifact_file
    from app.offline.datasets import read_corpus
    from app.offline.fit import corrected_vectors, fit_artifact
    from app.offline.retrieval import compare

    if space not in ("search", "similarity"):
        raise fail(f"--space is search or similarity, got {space!r}", EXIT_BAD_INPUT)
    settings = settings_for(pooling)
    if mode is not None:
        asked = {"feedback_docs": feedback_docs, "feedback_weight": feedback_weight}
        settings = settings.model_copy(update={k: v for k, v in asked.items() if v is not None})
        return _eval_served(settings, data, mode, correction, as_json)
    backbone = offline_backbone(settings)
    (judged,) = judged_sets(backbone, [data], settings)
    if correction == "fit":
        corpus = fit_corpus or settings.tune_pairs[0]
        tuning = tuning_pairs(backbone, options.method, options.tune_pairs, options.no_tune, settings)
        artifact = fit_artifact(backbone, read_corpus(corpus), options.method, options.params(), source=corpus.name,
                                tuning=tuning, judged=judged_sets(backbone, tune_qrels, settings))  # fmt: skip
    elif correction == "served":
        artifact = find_bundled(settings.models_dir, backbone)
    else:
        artifact = None if correction == "none" else read_artifact_file(Path(correction))
    if artifact is not None:
        check_compatible(artifact, backbone)
    fixed = None if artifact is None else Correction(artifact).search if space == "search" else Correction(artifact)
    collection = judged.collection
    corrected = tuple(
        corrected_vectors(backbone, fixed, texts, raw, desc=what)
        for texts, raw, what in ((collection.doc_texts, judged.docs, "documents"),
                                 (collection.query_texts, judged.queries, "queries"))
    )  # fmt: skip
    figures = compare(judged.judgments, (judged.docs, judged.queries), corrected, factory=settings.index_factory,
                      recall=settings.index_recall)  # fmt: skip
    described = fixed.describe_search() if fixed and space == "search" else None
    result = {"data": judged.name, "backbone": backbone.name, "pooling": backbone.pooling,
              "correction": artifact.id if artifact else None, "space": space, "search_space": described,
              **figures}  # fmt: skip
    if not as_json:
        searched = f", search space {described['method']} ({described['dim']} dims)" if described else ""
        typer.echo(f"{backbone.name} {backbone.pooling} on {result['data']} ({figures['n_queries']} queries, "
                   f"{figures['n_docs']} documents), correction {result['correction']}{searched}:")  # fmt: skip
        for metric in ("ndcg_at_10", "recall_at_100", "mrr_at_10"):
            low, high = figures[f"{metric}_change_95"]
            typer.echo(f"  {metric}: raw {figures[f'raw_{metric}']:.2f}, corrected {figures[metric]:.2f} "
                       f"(change 95% [{low:+.2f}, {high:+.2f}]); index {figures[f'index_raw_{metric}']:.2f} / "
                       f"{figures[f'index_{metric}']:.2f}")  # fmt: skip
    typer.echo(json.dumps(result))


def _eval_served(settings, data: Path, mode: str, correction: str, as_json: bool) -> None:
    """`eval-search --mode`: the collection searched through the services /search runs."""
    from app.offline.retrieval import read_judged_corpus
    from app.offline.served_search import MODES, evaluate_served

    if mode not in MODES:
        raise fail(f"--mode is one of {', '.join(MODES)}, got {mode!r}", EXIT_BAD_INPUT)
    if correction == "fit":
        raise fail("--mode searches with a served correction: served, none, or an artifact file", EXIT_BAD_INPUT)
    collection = read_judged_corpus(data)
    figures = evaluate_served(settings, collection, mode, correction=None if correction == "served" else correction)
    result = {"data": Path(data).name, "backbone": settings.backbone, "pooling": settings.pooling, **figures}
    if not as_json:
        typer.echo(f"{result['data']} ({figures['n_queries']} queries, {figures['n_docs']} documents, "
                   f"{figures['passages']} passages), {mode}: {figures['ranking']}", err=True)  # fmt: skip
        for metric in ("ndcg_at_10", "recall_at_100", "mrr_at_10"):
            low, high = figures[f"{metric}_change_95"]
            typer.echo(f"  {metric}: dense {figures[f'raw_{metric}']:.2f}, {mode} {figures[metric]:.2f} "
                       f"(change 95% [{low:+.2f}, {high:+.2f}])", err=True)  # fmt: skip
    typer.echo(json.dumps(result))
