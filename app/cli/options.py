"""What the commands share: option declarations, the correction method's options, settings and exit codes."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

import typer

from app.core.config import STS_DIR, Settings, get_settings
from app.core.names import ALSO_METHODS, STUDIED_POOLINGS, Method, Pooling
from app.index.fusion import DEFAULT_FUSION, DEFAULT_WEIGHT

EXIT_BAD_INPUT = 2
EXIT_BAD_ARTIFACT = 3
STS_TRAIN, STS_DEV, STS_TEST = (STS_DIR / f"sts-{part}.csv" for part in ("train", "dev", "test"))

CorpusOpt = Annotated[Path, typer.Option(help="One sentence per line, or a pairs file (both sides used).")]
PoolingOpt = Annotated[Pooling | None, typer.Option(help="Pooling; default CE_POOLING (mean).")]
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
    typer.Option(help="auto: labelled pairs to choose on (repeatable); default STS-B train + dev."),
]
TuneQrelsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        help="Relevance judgments to choose the search space and the ranking (dense, lexical, fused) on: a "
        "BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels/test.tsv), repeatable; default: the documented rules "
        f"(raw vectors unless they lie in a cone; hybrid, {DEFAULT_FUSION} fusion, lexical weight {DEFAULT_WEIGHT})."
    ),
]
NoTuneOpt = Annotated[bool, typer.Option(help="auto: skip tuning, use the documented default correction.")]
EngineOpt = Annotated[
    Literal["local", "ray"], typer.Option(help="local (this process), or ray (actors; pip install .[ray]).")
]
AddressOpt = Annotated[
    str | None, typer.Option(help="ray: the cluster to join (ray://... or auto); default: start a local Ray.")
]
WorkersOpt = Annotated[int, typer.Option(min=1, help="ray: encoding actors, one backbone each.")]
BlocksOpt = Annotated[int, typer.Option(min=1, help="flow: Glow blocks (actnorm, linear mixing, affine coupling).")]
FlowSecondsOpt = Annotated[
    float, typer.Option(min=1, help="flow: training time limit in seconds (50 epochs or early stopping end it first).")
]
ThenWhitenOpt = Annotated[float | None, typer.Option(help="flow: then whiten its output with this alpha.")]
PoolingsOpt = Annotated[
    list[str] | None,
    typer.Option(help="Poolings to compare (repeatable); default the four studied."),
]
FitCorpusOpt = Annotated[Path, typer.Option(help="Corpus every method is fitted on.")]
TestPairsOpt = Annotated[Path, typer.Option(help="Labelled pairs the table scores.")]
AlsoOpt = Annotated[
    list[str] | None,
    typer.Option(help="auto: let flow and/or sif (repeatable) compete with the linear choice on the tuning pairs."),
]
SifAOpt = Annotated[float, typer.Option(min=1e-9, help="sif: a in the token weight a / (a + p(w)).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
JsonLastOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object as the last line.")]

P = ParamSpec("P")
R = TypeVar("R")


def fail(message: str, code: int) -> typer.Exit:
    """A one-line error on stderr and the exit code scripts test."""
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


def guarded(fn: Callable[P, R]) -> Callable[P, R]:
    """Map input and artifact errors to a one-line message and an exit code scripts can test."""
    from app.api.errors import status_of
    from app.core.errors import ArtifactError, ServiceError, StoreUnavailable
    from app.offline.datasets import DataFileError

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except (DataFileError, ValueError) as exc:
            raise fail(str(exc), EXIT_BAD_INPUT) from None
        except (ArtifactError, StoreUnavailable) as exc:
            raise fail(exc.message, EXIT_BAD_ARTIFACT) from None
        except ServiceError as exc:  # what HTTP answers with a 4xx: a taken name, an unknown collection
            if status_of(exc) >= 500:
                raise
            raise fail(exc.message, EXIT_BAD_INPUT) from None

    return wrapper


def settings_for(pooling: str | None = None) -> Settings:
    """The environment's settings, with the pooling an option asked for."""
    settings = get_settings()
    return settings.model_copy(update={"pooling": pooling}) if pooling else settings


def poolings(names: list[str] | None) -> list[Pooling]:
    """The poolings asked for (the four the bundled corrections study, by default), each checked."""
    unknown = sorted(set(names or []) - set(Pooling))
    if unknown:
        raise fail(f"unknown pooling {unknown[0]!r}; choose from {', '.join(Pooling)}", EXIT_BAD_INPUT)
    return [Pooling(name) for name in names] if names else list(STUDIED_POOLINGS)


@dataclass(frozen=True)
class MethodOptions:
    """A correction method and the options of every method, as `fit` and `eval` take them."""

    method: str
    dim: int | None
    alpha: float
    eps: float
    drop: int | None
    blocks: int
    flow_seconds: float
    then_whiten: float | None
    sif_a: float
    also: list[str]
    tune_pairs: list[Path] | None
    no_tune: bool

    def params(self) -> dict[str, Any]:
        """The parameters of the chosen method; for `auto` with `--also`, those of each competitor too."""
        unknown = sorted(set(self.also) - set(ALSO_METHODS))
        if unknown or (self.also and self.method != Method.AUTO):
            raise fail(
                f"--also takes flow or sif, with --method auto; got {', '.join(unknown or self.also)}", EXIT_BAD_INPUT
            )
        if self.method == Method.AUTO and self.also:
            return {"also": {m: self._params_of(m) for m in self.also}}
        return self._params_of(self.method)

    def _params_of(self, method: str) -> dict[str, Any]:
        """The parameters `method` takes, picked from the options by name."""
        match method:
            case Method.FLOW:
                return {"blocks": self.blocks, "max_seconds": self.flow_seconds, "whiten": self.then_whiten}
            case Method.SIF:
                return {"a": self.sif_a}
            case Method.WHITENING:
                return {"dim": self.dim, "alpha": self.alpha, "eps": self.eps, "drop": self.drop or 0}
            case Method.ABTT:
                return {"drop": 1 if self.drop is None else self.drop}
            case Method.NONE | Method.CENTER | Method.AUTO:
                return {}
        raise fail(f"unknown method {method!r}; choose {', '.join(Method)}", EXIT_BAD_INPUT)


def method_options(
    method: MethodOpt = Method.WHITENING,
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
) -> MethodOptions:
    """The options of every command that fits a correction, declared once."""
    return MethodOptions(
        method, dim, alpha, eps, drop, blocks, flow_seconds, then_whiten, sif_a, also or [], tune_pairs, no_tune
    )


# What a command's `options` parameter holds by default; `with_options` replaces it with the parsed options.
METHOD_DEFAULTS = method_options()


def with_options(group: Callable[..., Any], name: str = "options") -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Give a command `group`'s parameters in place of its parameter `name`, which then receives `group(...)`."""

    def decorate(command: Callable[..., R]) -> Callable[..., R]:
        signature = inspect.signature(command, eval_str=True)
        own = list(signature.parameters.values())
        grouped = list(inspect.signature(group, eval_str=True).parameters.values())
        at = [p.name for p in own].index(name)
        parameters = own[:at] + grouped + own[at + 1 :]

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> R:
            values = {p.name: kwargs.pop(p.name) for p in grouped}
            return command(**kwargs, **{name: group(**values)})

        wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]  # typer reads it
        wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
        return wrapper

    return decorate
