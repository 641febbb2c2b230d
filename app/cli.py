"""`python -m app`: serve, fit, index and eval, all through the same service code as the API."""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Annotated, Literal, get_args

import numpy as np
import typer

from app.core.settings import ROOT, Pooling, Settings, get_settings

cli = typer.Typer(
    help="Corrected sentence embeddings: fit a correction offline, evaluate it, index documents, serve.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

STS = "datasets/stsbenchmark"
EXIT_BAD_INPUT = 2
EXIT_BAD_ARTIFACT = 3

PoolingOpt = Annotated[Pooling | None, typer.Option(help="Pooling; default CE_POOLING (mean).")]
METHOD_NAMES = ("none", "center", "abtt", "whitening", "flow", "sif", "auto")
MethodOpt = Annotated[
    str,
    typer.Option(
        help="none, center, abtt, whitening, flow (BERT-flow), sif (mean/embedding_avg pooling only), or auto "
        "(the best of the linear ones on labelled pairs)."
    ),
]
DimOpt = Annotated[int | None, typer.Option("--dim", "-k", help="whitening: output dims kept; default all.")]
AlphaOpt = Annotated[float, typer.Option(help="whitening: eigenvalue power, 0.5 full, 0 a rotation.")]
EpsOpt = Annotated[float, typer.Option(help="whitening: shrink eigenvalues toward their mean (0..1).")]
DropOpt = Annotated[int | None, typer.Option(help="abtt/whitening: top principal directions removed; default 1 / 0.")]
TuneOpt = Annotated[
    list[Path] | None,
    typer.Option(help="auto: labelled pairs to choose on (repeatable); default CE_TUNE_PAIRS, STS-B train+dev."),
]
NoTuneOpt = Annotated[bool, typer.Option(help="auto: skip tuning, use the documented default correction.")]
Engine = Literal["local", "ray"]
EngineOpt = Annotated[Engine, typer.Option(help="local (this process), or ray (actors; pip install .[ray]).")]
AddressOpt = Annotated[
    str | None, typer.Option(help="ray: the cluster to join (ray://... or auto); default: start a local Ray.")
]
WorkersOpt = Annotated[int, typer.Option(min=1, help="ray: encoding actors, one backbone each.")]
BlocksOpt = Annotated[int, typer.Option(min=1, help="flow: Glow blocks (actnorm, linear mixing, affine coupling).")]
FlowSecondsOpt = Annotated[
    float, typer.Option(min=1, help="flow: training time limit in seconds (50 epochs or early stopping end it first).")
]
ThenWhitenOpt = Annotated[float | None, typer.Option(help="flow: then whiten its output with this alpha.")]
PoolingsOpt = Annotated[list[str] | None, typer.Option(help="Poolings to compare (repeatable); default all four.")]
FitCorpusOpt = Annotated[Path, typer.Option(help="Corpus every method is fitted on.")]
TestPairsOpt = Annotated[Path, typer.Option(help="Labelled pairs the table scores.")]
AlsoOpt = Annotated[
    list[str] | None,
    typer.Option(help="auto: let flow and/or sif (repeatable) compete with the linear choice on the tuning pairs."),
]
SifAOpt = Annotated[float, typer.Option(min=1e-9, help="sif: a in the token weight a / (a + p(w)).")]


def _fit(settings, backbone, sentences, method, params, source, tuning, engine, address, workers):
    """The same fit, with the corpus encoded here or by Ray actors whose statistics are reduced."""
    from app.fitting import ISOTROPY_SAMPLE, fit_artifact, fit_from_stats, sample_rows

    if engine == "local":
        return fit_artifact(backbone, sentences, method, params, source=source, tuning=tuning)
    if method in ("flow", "sif") or params.get("also"):
        raise ValueError(f"{method} {params} trains on the vectors themselves: use --engine local")
    from app.distributed import encode_stats_on_ray, ray_session

    with ray_session(address, workers):
        stats, sample = encode_stats_on_ray(settings, sentences, workers=workers)
    sample = sample_rows(sample, ISOTROPY_SAMPLE)
    return fit_from_stats(backbone, sentences, stats, sample, method, params, source, tuning=tuning)


def _settings(pooling: str | None = None) -> Settings:
    settings = get_settings()
    return settings.model_copy(update={"pooling": pooling}) if pooling else settings


def _fail(message: str, code: int) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


def _method_params(method: str, options: dict) -> dict:
    """The parameters `method` takes, picked by name from the options of the command (fit, eval) it runs in."""
    also = options["also"] or []
    unknown = sorted(set(also) - {"flow", "sif"})
    if unknown or (also and method != "auto"):
        raise _fail(f"--also takes flow or sif, with --method auto; got {', '.join(unknown or also)}", EXIT_BAD_INPUT)
    if method == "auto":  # flow and SIF, when asked to compete, with the parameters given for them
        return {"also": {m: _method_params(m, {**options, "also": None}) for m in also}} if also else {}
    if method == "flow":
        return {"blocks": options["blocks"], "max_seconds": options["flow_seconds"], "whiten": options["then_whiten"]}
    if method == "sif":
        return {"a": options["sif_a"]}
    if method == "whitening":
        return {"dim": options["dim"], "alpha": options["alpha"], "eps": options["eps"], "drop": options["drop"] or 0}
    if method == "abtt":
        return {"drop": 1 if options["drop"] is None else options["drop"]}
    if method in ("none", "center"):
        return {}
    raise _fail(f"unknown method {method!r}; choose {', '.join(METHOD_NAMES)}", EXIT_BAD_INPUT)


def _offline_backbone(settings: Settings):
    """The configured backbone, remembering what it encoded for the length of one command."""
    from app.backbones import build_backbone
    from app.fitting import RememberingBackbone

    return RememberingBackbone(build_backbone(settings))


def _tuning(backbone, method: str, files: list[Path] | None, no_tune: bool, settings: Settings, evaluated=None):
    """Encoded tuning pairs for `auto` (None for the other methods, or with --no-tune)."""
    if method != "auto" or no_tune:
        return None
    from app.datasets import read_pairs
    from app.fitting import encode_pairs
    from app.tuning import TuningPairs

    files = files or settings.tune_pairs
    if evaluated is not None and any(Path(f).resolve() == Path(evaluated).resolve() for f in files):
        typer.secho("warning: tuning on the evaluated pairs overstates the score", fg=typer.colors.YELLOW, err=True)
    return TuningPairs.concat([encode_pairs(backbone, read_pairs(f), name=Path(f).name) for f in files])


def _guarded(fn):
    """Map input and artifact errors to a one-line message and an exit code scripts can test."""
    from functools import wraps

    from app.core.errors import ArtifactError, StoreUnavailable
    from app.datasets import DataFileError

    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (DataFileError, ValueError) as exc:
            raise _fail(str(exc), EXIT_BAD_INPUT) from None
        except (ArtifactError, StoreUnavailable) as exc:
            raise _fail(exc.message, EXIT_BAD_ARTIFACT) from None

    return wrapper


@cli.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address; default CE_HOST.")] = None,
    port: Annotated[int | None, typer.Option(help="Port; default CE_PORT.")] = None,
) -> None:
    """Serve the HTTP API (embed, similarity, documents, search) with uvicorn."""
    import threadpoolctl
    import uvicorn

    from app.main import create_app

    settings = get_settings()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # The encoder thread runs Python between torch kernels; with the default 5 ms GIL switch interval each
    # hand-off to the event loop (request in, response out) can wait that long. 0.5 ms keeps them prompt.
    sys.setswitchinterval(0.0005)
    # The correction's small matrix products need no BLAS threads; idle BLAS threads spin against torch's.
    threadpoolctl.threadpool_limits(1, user_api="blas")
    uvicorn.run(create_app(settings), host=host or settings.host, port=port or settings.port)


@cli.command()
@_guarded
def fit(
    corpus: Annotated[Path, typer.Option(help="One sentence per line, or a pairs file (both sides used).")],
    pooling: PoolingOpt = None,
    method: MethodOpt = "whitening",
    dim: DimOpt = None,
    alpha: AlphaOpt = 0.5,
    eps: EpsOpt = 0.0,
    drop: DropOpt = None,
    blocks: BlocksOpt = 4,
    flow_seconds: FlowSecondsOpt = 600.0,
    then_whiten: ThenWhitenOpt = None,
    sif_a: SifAOpt = 1e-3,
    also: AlsoOpt = None,
    tune_pairs: TuneOpt = None,
    no_tune: NoTuneOpt = False,
    out: Annotated[Path | None, typer.Option(help="Artifact file; default DATA_DIR/artifacts/ID.npz.")] = None,
    publish: Annotated[bool, typer.Option(help="Also publish to Redis as the current correction.")] = False,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = 2,
) -> None:
    """Fit a correction on a corpus and write it as an artifact; prints the artifact id."""
    from app.artifacts import publish as publish_artifact
    from app.artifacts import write_artifact_file
    from app.datasets import read_corpus

    settings = _settings(pooling)
    params = _method_params(method, locals())
    sentences = read_corpus(corpus)
    backbone = _offline_backbone(settings)
    tuning = _tuning(backbone, method, tune_pairs, no_tune, settings)
    artifact = _fit(settings, backbone, sentences, method, params, corpus.name, tuning, engine, address, workers)
    path = write_artifact_file(artifact, out or settings.data_dir / "artifacts" / f"{artifact.id}.npz")
    typer.echo(f"wrote {path}", err=True)
    if publish:
        from app.service import connect_store

        store, embedded = connect_store(settings)
        try:
            publish_artifact(store, artifact)
        finally:
            store.close()
            if embedded:
                embedded.stop()
        typer.echo(f"published {artifact.id} as current for backbone {backbone.fingerprint}", err=True)
    typer.echo(artifact.id)


@cli.command("index")
@_guarded
def index_documents(
    corpus: Annotated[Path, typer.Option(help="One text per line, or JSON lines with id, text, metadata.")],
    batch: Annotated[int, typer.Option(min=1, help="Documents per write.")] = 256,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = 2,
) -> None:
    """Add documents to the store (and so to every index built from it); prints how many."""
    from tqdm.auto import tqdm

    from app.datasets import read_documents
    from app.service import EmbeddingService

    docs = read_documents(corpus)
    settings = get_settings()
    if engine == "ray":
        from app.distributed import index_on_ray, ray_session
        from app.store.redis_store import RedisStore

        try:
            with ray_session(address, workers):
                written = index_on_ray(settings, docs, workers=workers)
        except ValueError as exc:
            raise _fail(str(exc), 2) from None
        store = RedisStore.from_url(settings.redis_url, prefix=settings.key_prefix)
        space = _offline_backbone(settings).fingerprint
        typer.echo(f"indexed {written} documents on Ray; the store holds {store.count_documents(space)}")
        store.close()
        return
    service = EmbeddingService.from_settings(settings.model_copy(update={"max_texts": max(batch, 1)}), search=False)
    try:
        with tqdm(total=len(docs), desc="indexing", unit="doc") as bar:
            for start in range(0, len(docs), batch):
                chunk = docs[start : start + batch]
                service.add_documents(chunk)
                bar.update(len(chunk))
        typer.echo(f"indexed {len(docs)} documents; the store holds {service.store.count_documents(service.space_id)}")
    finally:
        service.close()


@cli.command("eval")
@_guarded
def evaluate(
    pairs: Annotated[Path, typer.Option(help="Labelled pairs: STS-benchmark layout or s1<TAB>s2<TAB>score.")],
    fit_corpus: Annotated[
        Path | None, typer.Option(help="Corpus to fit on; default: the evaluated pairs' own sentences.")
    ] = None,
    pooling: PoolingOpt = None,
    method: MethodOpt = "whitening",
    dim: DimOpt = None,
    alpha: AlphaOpt = 0.5,
    eps: EpsOpt = 0.0,
    drop: DropOpt = None,
    blocks: BlocksOpt = 4,
    flow_seconds: FlowSecondsOpt = 600.0,
    then_whiten: ThenWhitenOpt = None,
    sif_a: SifAOpt = 1e-3,
    also: AlsoOpt = None,
    tune_pairs: TuneOpt = None,
    no_tune: NoTuneOpt = False,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = 2,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Spearman x100 of cosine vs gold scores, raw and corrected (`--engine ray` fits on Ray)."""
    from app.correction import Correction
    from app.datasets import read_corpus, read_pairs
    from app.evaluation import spearman_x100
    from app.fitting import corrected_vectors, encode_all, fit_from_vectors

    settings = _settings(pooling)
    params = _method_params(method, locals())
    data = read_pairs(pairs)
    backbone = _offline_backbone(settings)
    tuning = _tuning(backbone, method, tune_pairs, no_tune, settings, evaluated=pairs)
    n = len(data)
    vectors = encode_all(backbone, data.left + data.right, desc="eval pairs")
    if fit_corpus is None and engine == "local":
        corpus = data.left + data.right
        artifact = fit_from_vectors(backbone, corpus, vectors, method, params, tuning=tuning)
    else:
        corpus = read_corpus(fit_corpus) if fit_corpus else data.left + data.right
        source = fit_corpus.name if fit_corpus else pairs.name
        artifact = _fit(settings, backbone, corpus, method, params, source, tuning, engine, address, workers)
    corrected = corrected_vectors(backbone, Correction(artifact), data.left + data.right, vectors, desc="eval pairs")
    result = {
        "raw_spearman": round(spearman_x100(vectors[:n], vectors[n:], data.scores), 2),
        "corrected_spearman": round(spearman_x100(corrected[:n], corrected[n:], data.scores), 2),
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
            f"{artifact.method} {artifact.params} (dim {artifact.out_dim}) {result['corrected_spearman']:.2f}"
        )


@cli.command()
@_guarded
def isotropy(
    corpus: Annotated[Path, typer.Option(help="One sentence per line, or a pairs file (both sides used).")],
    artifact: Annotated[
        Path | None, typer.Option(help="Correction to measure; default the bundled one for this backbone.")
    ] = None,
    pooling: PoolingOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """How isotropic the corpus's vectors are, raw and corrected: cosine of random pairs, IsoScore, I(W), rank."""
    from app.artifacts import check_compatible, find_bundled, read_artifact_file
    from app.correction import Correction
    from app.correction.isotropy import isotropy_report
    from app.datasets import read_corpus
    from app.fitting import ISOTROPY_SAMPLE, corrected_vectors, encode_all, sample_rows

    settings = _settings(pooling)
    sentences = read_corpus(corpus)
    backbone = _offline_backbone(settings)
    fitted = read_artifact_file(artifact) if artifact else find_bundled(settings.models_dir, backbone)
    if fitted is None:
        raise _fail(f"no correction for {backbone.name}/{backbone.pooling}; pass --artifact", EXIT_BAD_ARTIFACT)
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


@cli.command()
@_guarded
def report(
    out: Annotated[Path, typer.Option(help="Folder for report.md and the PNG plots (created).")],
    pooling: PoolingsOpt = None,
    fit_corpus: FitCorpusOpt = ROOT / STS / "sts-train.csv",
    test_pairs: TestPairsOpt = ROOT / STS / "sts-test.csv",
    tune_pairs: TuneOpt = None,
) -> None:
    """Write a Markdown summary (methods x poolings on STS-B test, isotropy) and plots to OUT."""
    from app.correction import Correction
    from app.datasets import read_corpus, read_pairs
    from app.fitting import encode_all, encode_pairs, fit_from_vectors
    from app.reporting import evaluate_methods, plot_cosines, plot_spectrum, write_markdown

    out.mkdir(parents=True, exist_ok=True)
    corpus, test = read_corpus(fit_corpus), read_pairs(test_pairs)
    results, plots = [], {}
    for name in _poolings(pooling):
        settings = _settings(name)
        backbone = _offline_backbone(settings)
        vectors = encode_all(backbone, corpus, desc=f"{name}: fitting corpus")
        tuning = _tuning(backbone, "auto", tune_pairs, False, settings, evaluated=test_pairs)
        test_vectors = encode_pairs(backbone, test, name=test_pairs.name)

        def fit(method, params, backbone=backbone, vectors=vectors, tuning=tuning):
            return fit_from_vectors(backbone, corpus, vectors, method, params, fit_corpus.name, tuning=tuning)

        result = evaluate_methods(fit, test_vectors, name)
        results.append(result)
        correction, title = Correction(result.auto), f"{backbone.name}, {name} pooling"
        plots[name] = {
            "spectrum": plot_spectrum(out / f"spectrum-{name}.png", vectors, correction, title),
            "cosines": plot_cosines(out / f"cosines-{name}.png", vectors, test_vectors, correction, title),
        }
        typer.echo(f"{name}: " + ", ".join(f"{k} {v:.2f}" for k, v in result.scores.items()), err=True)
    tune_names = "+".join(Path(f).name for f in (tune_pairs or get_settings().tune_pairs))
    sources = {"fit": fit_corpus.name, "tune": tune_names, "test": test_pairs.name}
    path = write_markdown(
        out / "report.md", results, backbone=results[0].auto.backbone.name, sources=sources, plots=plots
    )
    typer.echo(str(path))


@cli.command()
@_guarded
def compare(
    pooling: PoolingsOpt = None,
    fit_corpus: FitCorpusOpt = ROOT / STS / "sts-train.csv",
    test_pairs: TestPairsOpt = ROOT / STS / "sts-test.csv",
    tune_pairs: TuneOpt = None,
    method: Annotated[
        list[str] | None, typer.Option(help="Only these methods (repeatable: none, center, abtt, whitening, ...).")
    ] = None,
    flow_seconds: FlowSecondsOpt = 600.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Every correction (none, center, ABTT, whitening, auto, flow, SIF) x poolings: Spearman, dims, fit and
    apply cost, as one Markdown table."""
    from app.comparison import COMPARE_METHODS, as_records, compare_pooling, markdown_table
    from app.datasets import read_corpus, read_pairs
    from app.fitting import corrected_vectors, encode_all, fit_from_vectors

    methods = [m for m in COMPARE_METHODS if not method or m[1] in method]
    known = [name for _, name, _ in COMPARE_METHODS]
    unknown = sorted(set(method or []) - set(known))
    if unknown:
        raise _fail(f"unknown method {unknown[0]!r}; choose from {', '.join(known)}", EXIT_BAD_INPUT)
    corpus, test = read_corpus(fit_corpus), read_pairs(test_pairs)
    needs_tuning = any(m == "auto" for _, m, _ in methods)
    rows = []
    for name in _poolings(pooling):
        settings = _settings(name)
        backbone = _offline_backbone(settings)
        vectors = encode_all(backbone, corpus, desc=f"{name}: fitting corpus")
        tuning = _tuning(backbone, "auto", tune_pairs, not needs_tuning, settings, evaluated=test_pairs)
        test_raw = encode_all(backbone, test.left + test.right, desc=f"{name}: test pairs")

        def fit(method, params, backbone=backbone, vectors=vectors, tuning=tuning):
            params = {**params, "max_seconds": flow_seconds} if method == "flow" else params
            return fit_from_vectors(backbone, corpus, vectors, method, params, fit_corpus.name, tuning=tuning)

        def correct(correction, texts, raw, backbone=backbone):
            return corrected_vectors(backbone, correction, texts, raw, progress=False)

        rows += compare_pooling(name, fit, correct, test, test_raw, methods)
        typer.echo(f"{name}: " + ", ".join(f"{r.label} {r.spearman:.2f}" for r in rows if r.pooling == name), err=True)
    if as_json:
        typer.echo(json.dumps({"fit": fit_corpus.name, "test": test_pairs.name, "rows": as_records(rows)}))
    else:
        typer.echo(markdown_table(rows))


def _poolings(names: list[str] | None) -> list[str]:
    """The poolings asked for (all four by default), each checked."""
    poolings = names or list(get_args(Pooling))
    unknown = sorted(set(poolings) - set(get_args(Pooling)))
    if unknown:
        raise _fail(f"unknown pooling {unknown[0]!r}; choose from {', '.join(get_args(Pooling))}", EXIT_BAD_INPUT)
    return poolings


@cli.command()
@_guarded
def bench(
    texts: Annotated[int, typer.Option(min=64, help="STS-B sentences sent in each load pattern.")] = 2000,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object as the last line.")] = False,
) -> None:
    """Throughput and latency of the service over HTTP, as ratios to the backbone called in-process."""
    from app.artifacts import find_bundled
    from app.backbones import build_backbone
    from app.bench import (
        http_load,
        in_process_limit,
        peak_rss_mb,
        percentile,
        running_service,
        single_client_latency,
        single_text_seconds,
    )
    from app.correction import Correction
    from app.datasets import read_corpus

    settings = get_settings()
    sentences = (read_corpus(ROOT / STS / "sts-test.csv") + read_corpus(ROOT / STS / "sts-dev.csv"))[:texts]
    backbone = build_backbone(settings)

    def with_batch(size):
        backbone.batch_size = size
        return backbone.encode

    typer.echo(f"in-process limit over {len(sentences)} sentences ...", err=True)
    limit, best_batch = in_process_limit(with_batch, sentences)
    one_text = single_text_seconds(with_batch(best_batch))
    correction_share = None
    artifact = find_bundled(settings.models_dir, backbone)
    if artifact is not None:
        raw = backbone.encode(sentences[:512])
        start = time.perf_counter()
        Correction(artifact).apply(raw)
        correction_share = (time.perf_counter() - start) / (len(raw) / limit)
    typer.echo("starting the service ...", err=True)
    with running_service({"CE_BATCH_SIZE": str(best_batch)}) as (url, pid):
        http_load(url, sentences[:256], clients=8, per_request=8, name="warm-up")
        patterns = {
            "a_8_clients_x_8_texts": http_load(url, sentences, clients=8, per_request=8, name="a"),
            "b_32_clients_x_1_text": http_load(url, sentences, clients=32, per_request=1, name="b"),
        }
        latencies = single_client_latency(url)
        rss = peak_rss_mb(pid)
    result = {
        "backbone": settings.model_name or "all-MiniLM-L6-v2"
        if settings.backbone == "huggingface"
        else settings.backbone,
        "pooling": settings.pooling,
        "sentences": len(sentences),
        "limit_sentences_per_s": round(limit, 1),
        "limit_batch_size": best_batch,
        **{name: r.summary(limit) for name, r in patterns.items()},
        "single_text_p50_ms": round(percentile(latencies, 50) * 1000, 2),
        "single_text_p99_ms": round(percentile(latencies, 99) * 1000, 2),
        "single_text_in_process_ms": round(one_text * 1000, 2),
        "single_text_ratio": round(percentile(latencies, 50) / one_text, 2),
        "correction_share_of_encoding": None if correction_share is None else round(correction_share, 4),
        "server_peak_rss_mb": round(rss, 1),
    }
    if not as_json:
        typer.echo(f"limit (in-process, batch {best_batch}): {limit:.0f} sentences/s")
        for name in patterns:
            summary = result[name]
            typer.echo(
                f"{name}: {summary['sentences_per_s']:.0f} sentences/s = {summary['ratio_to_limit']:.2f} x limit, "
                f"p50 {summary['p50_ms']} ms, p99 {summary['p99_ms']} ms, errors {summary['errors']}"
            )
        typer.echo(
            f"single short text: p50 {result['single_text_p50_ms']} ms over HTTP vs "
            f"{result['single_text_in_process_ms']} ms in-process = {result['single_text_ratio']}x"
        )
        typer.echo(f"correction: {result['correction_share_of_encoding']} of encoding time; peak RSS {rss:.0f} MB")
    typer.echo(json.dumps(result))


@cli.command()
@_guarded
def load(
    seconds: Annotated[float, typer.Option(min=1, help="How long the clients keep sending.")] = 60,
    clients: Annotated[int, typer.Option(min=1, help="Concurrent clients, each on a keep-alive connection.")] = 32,
    url: Annotated[
        str | None, typer.Option(help="A running service to load (RSS is then not sampled); default: start one.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object as the last line.")] = False,
) -> None:
    """Mixed load (embed, similarity, search, document writes and deletes): errors, p50/p99, RSS over time."""
    from contextlib import nullcontext

    from app.bench import running_service
    from app.datasets import read_corpus
    from app.load_test import run_load

    texts = read_corpus(ROOT / STS / "sts-dev.csv")
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


@cli.command("bench-search")
@_guarded
def bench_search(
    n: Annotated[int, typer.Option(min=1000, help="Synthetic documents to index.")] = 1_000_000,
    dim: Annotated[
        int | None, typer.Option(min=2, help="Corrected dims (refits the bundled whitening); default: as served.")
    ] = None,
    queries: Annotated[int, typer.Option(min=10, help="Queries, timed one at a time on one thread.")] = 1000,
    index: Annotated[str | None, typer.Option(help="FAISS factory string; default: CE_INDEX_FACTORY.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object as the last line.")] = False,
) -> None:
    """recall@10, latency, build time and memory of the search index against exact search.

    Synthetic documents come from a Gaussian mixture fitted on the backbone's corrected vectors of
    every STS-B sentence; the same figures follow on those real sentences (1,000 held out as queries).
    """
    from app.search_bench import run

    settings = get_settings()
    try:
        result = run(settings, ROOT / STS, n=n, dim=dim, queries=queries, factory=index or settings.index_factory)
    except ValueError as exc:
        raise _fail(str(exc), 2) from None
    if not as_json:
        from app.search_bench import SearchFigures

        fields = SearchFigures.__dataclass_fields__
        for figures in [result, *result["real"]]:
            typer.echo(SearchFigures(**{k: figures[k] for k in fields}).row())
    typer.echo(json.dumps(result))


def main() -> None:
    """Console entry point."""
    try:
        cli()
    except KeyboardInterrupt:
        sys.exit(130)
