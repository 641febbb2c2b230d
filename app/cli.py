"""`python -m app`: serve, fit, index and eval, all through the same service code as the API."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from app.core.settings import Pooling, Settings, get_settings

cli = typer.Typer(
    help="Corrected sentence embeddings: fit a correction offline, evaluate it, index documents, serve.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_BAD_INPUT = 2
EXIT_BAD_ARTIFACT = 3

PoolingOpt = Annotated[Pooling | None, typer.Option(help="Pooling; default CE_POOLING (mean).")]
MethodOpt = Annotated[
    str, typer.Option(help="none, center, abtt, whitening, or auto (the best of them on labelled pairs).")
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


def _settings(pooling: str | None = None) -> Settings:
    settings = get_settings()
    return settings.model_copy(update={"pooling": pooling}) if pooling else settings


def _fail(message: str, code: int) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


def _method_params(method: str, dim: int | None, alpha: float, eps: float, drop: int | None) -> dict:
    """The parameters each method takes, from the shared options."""
    if method == "whitening":
        return {"dim": dim, "alpha": alpha, "eps": eps, "drop": drop or 0}
    if method == "abtt":
        return {"drop": 1 if drop is None else drop}
    if method in ("none", "center", "auto"):
        return {}
    raise _fail(f"unknown method {method!r}; choose none, center, abtt, whitening or auto", EXIT_BAD_INPUT)


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
    import uvicorn

    from app.main import create_app

    settings = get_settings()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
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
    tune_pairs: TuneOpt = None,
    no_tune: NoTuneOpt = False,
    out: Annotated[Path | None, typer.Option(help="Artifact file; default DATA_DIR/artifacts/ID.npz.")] = None,
    publish: Annotated[bool, typer.Option(help="Also publish to Redis as the current correction.")] = False,
) -> None:
    """Fit a correction on a corpus and write it as an artifact; prints the artifact id."""
    from app.artifacts import publish as publish_artifact
    from app.artifacts import write_artifact_file
    from app.datasets import read_corpus
    from app.fitting import fit_artifact

    settings = _settings(pooling)
    params = _method_params(method, dim, alpha, eps, drop)
    sentences = read_corpus(corpus)
    backbone = _offline_backbone(settings)
    tuning = _tuning(backbone, method, tune_pairs, no_tune, settings)
    artifact = fit_artifact(backbone, sentences, method, params, source=corpus.name, tuning=tuning)
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
) -> None:
    """Add documents to the store (and so to every index built from it); prints how many."""
    from tqdm.auto import tqdm

    from app.datasets import read_documents
    from app.service import EmbeddingService

    docs = read_documents(corpus)
    settings = get_settings()
    service = EmbeddingService.from_settings(settings.model_copy(update={"max_texts": max(batch, 1)}))
    try:
        with tqdm(total=len(docs), desc="indexing", unit="doc") as bar:
            for start in range(0, len(docs), batch):
                chunk = docs[start : start + batch]
                service.add_documents(chunk)
                bar.update(len(chunk))
        typer.echo(f"indexed {len(docs)} documents; the store holds {len(service.index)}")
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
    tune_pairs: TuneOpt = None,
    no_tune: NoTuneOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Spearman x100 of cosine vs gold scores, raw and corrected."""
    from app.correction import Correction
    from app.datasets import read_corpus, read_pairs
    from app.evaluation import spearman_x100
    from app.fitting import encode_all, fit_from_vectors

    settings = _settings(pooling)
    params = _method_params(method, dim, alpha, eps, drop)
    data = read_pairs(pairs)
    backbone = _offline_backbone(settings)
    tuning = _tuning(backbone, method, tune_pairs, no_tune, settings, evaluated=pairs)
    n = len(data)
    vectors = encode_all(backbone, data.left + data.right, desc="eval pairs")
    if fit_corpus is None:
        corpus, corpus_vectors = data.left + data.right, vectors
    else:
        corpus = read_corpus(fit_corpus)
        corpus_vectors = encode_all(backbone, corpus, desc="fitting corpus")
    artifact = fit_from_vectors(backbone, corpus, corpus_vectors, method, params, tuning=tuning)
    corrected = Correction(artifact).apply(vectors)
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


def main() -> None:
    """Console entry point."""
    try:
        cli()
    except KeyboardInterrupt:
        sys.exit(130)
