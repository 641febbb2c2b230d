"""`fit` a correction, `eval` it on labelled pairs, measure a corpus's `isotropy`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import typer

from app.cli.offline import fit_here_or_on_ray, judged_sets, offline_backbone, tuning_pairs
from app.cli.options import (
    EXIT_BAD_ARTIFACT,
    EXIT_BAD_INPUT,
    METHOD_DEFAULTS,
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
from app.correction.isotropy import POSITIVE_GOLD

if TYPE_CHECKING:
    from app.core.config import Settings
    from app.correction.artifact import CorrectionArtifact

FitCorpusOpt = Annotated[Path | None, typer.Option(help="One sentence per line, or a pairs file (both sides used).")]
CollectionOpt = Annotated[
    str | None,
    typer.Option(
        help="Fit on this collection's stored documents instead (nothing re-encoded); `auto` keeps "
        "the general correction unless labelled pairs show a clear gain; --publish serves it there."
    ),
]
OutOpt = Annotated[Path | None, typer.Option(help="Artifact file; default CE_DATA_DIR/artifacts/ID.npz.")]
PublishOpt = Annotated[bool, typer.Option(help="Also publish to Redis as the current correction.")]
PairsOpt = Annotated[Path, typer.Option(help="Labelled pairs: STS-benchmark layout or s1<TAB>s2<TAB>score.")]
EvalCorpusOpt = Annotated[
    Path | None, typer.Option(help="Corpus to fit on; default: the evaluated pairs' own sentences.")
]
PositiveGoldOpt = Annotated[
    float, typer.Option(help="Pairs whose gold score is at least this are the paraphrases alignment is measured on.")
]


@guarded
@with_options(method_options)
def fit(
    corpus: FitCorpusOpt = None,
    collection: CollectionOpt = None,
    pooling: PoolingOpt = None,
    options: MethodOptions = METHOD_DEFAULTS,
    out: OutOpt = None,
    publish: PublishOpt = False,
    tune_qrels: TuneQrelsOpt = None,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = 2,
) -> None:
    """Fit a correction (and the space search uses) on a corpus and write it as an artifact; prints its id."""
    if collection is not None and corpus is None:
        from app.cli.collections import fit_collection

        return fit_collection(collection, options.method, options.params(), options, tune_qrels, out, publish)
    if corpus is None or collection is not None:
        raise fail("give --corpus or --collection", EXIT_BAD_INPUT)
    from app.correction.publication import write_artifact_file
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
        _publish(settings, artifact)
    typer.echo(artifact.id)


def _publish(settings: Settings, artifact: CorrectionArtifact) -> None:
    """The artifact in Redis as the current correction of its backbone: every server rebuilds onto it."""
    from app.correction.publication import publish
    from app.services.container import connect_store

    store, embedded = connect_store(settings)
    try:
        publish(store, artifact)
    finally:
        store.close()
        if embedded:
            embedded.stop()
    typer.echo(f"published {artifact.id} as current for backbone {artifact.backbone.fingerprint}", err=True)


@guarded
@with_options(method_options)
def evaluate(
    pairs: PairsOpt,
    fit_corpus: EvalCorpusOpt = None,
    pooling: PoolingOpt = None,
    options: MethodOptions = METHOD_DEFAULTS,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = 2,
    as_json: JsonOpt = False,
    positive_gold: PositiveGoldOpt = POSITIVE_GOLD,
) -> None:
    """Spearman x100 of cosine vs gold scores, raw and corrected, with the space's alignment and uniformity
    (`--engine ray` fits on Ray)."""
    from app.offline.datasets import read_corpus, read_pairs
    from app.offline.encoding import encode_all
    from app.offline.evaluation import pairs_report
    from app.offline.fit import fit_from_vectors

    settings = settings_for(pooling)
    method, params = options.method, options.params()
    data = read_pairs(pairs)
    backbone = offline_backbone(settings)
    tuning = tuning_pairs(backbone, method, options.tune_pairs, options.no_tune, settings, evaluated=pairs)
    texts = data.left + data.right
    vectors = encode_all(backbone, texts, desc="eval pairs")
    if fit_corpus is None and engine == "local":
        corpus = texts
        artifact = fit_from_vectors(backbone, corpus, vectors, method, params, tuning=tuning)
    else:
        corpus = read_corpus(fit_corpus) if fit_corpus else texts
        source = fit_corpus.name if fit_corpus else pairs.name
        artifact = fit_here_or_on_ray(
            settings, backbone, corpus, method, params, source, tuning, engine, address, workers
        )
    result = pairs_report(backbone, data, vectors, artifact, gold=positive_gold) | {"fit_corpus_size": len(corpus)}
    if as_json:
        typer.echo(json.dumps(result))
    else:
        typer.echo(
            f"{backbone.name} {backbone.pooling} on {pairs.name} ({len(data)} pairs): "
            f"raw {result['raw_spearman']:.2f}, "
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
    from app.correction.publication import check_compatible, find_bundled, read_artifact_file
    from app.offline.datasets import read_corpus
    from app.offline.encoding import corrected_vectors, encode_all
    from app.offline.fit import ISOTROPY_SAMPLE, sample_rows

    settings = settings_for(pooling)
    sentences = read_corpus(corpus)
    backbone = offline_backbone(settings)
    fitted = read_artifact_file(artifact) if artifact else find_bundled(settings.models_dir, backbone)
    if fitted is None:
        raise fail(f"no correction for {backbone.name}/{backbone.pooling}; pass --artifact", EXIT_BAD_ARTIFACT)
    check_compatible(fitted, backbone)
    texts = list(sample_rows(np.asarray(sentences, dtype=object), ISOTROPY_SAMPLE))
    vectors = encode_all(backbone, texts, desc="corpus")
    result: dict[str, Any] = {
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
