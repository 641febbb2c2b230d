"""What the offline commands share: a backbone that remembers, the tuning pairs, a fit here or on Ray."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from app.core.config import TUNE_PAIRS, Settings
from app.core.names import ALSO_METHODS, Method
from app.offline.encoding import RememberingBackbone

if TYPE_CHECKING:
    import numpy as np

    from app.backbones.base import Backbone
    from app.correction.artifact import CorrectionArtifact
    from app.correction.selection import TuningPairs
    from app.offline.search_tuning import JudgedSet


def offline_backbone(settings: Settings) -> RememberingBackbone:
    """The configured backbone, remembering what it encoded for the length of one command."""
    from app.backbones import build_backbone

    return RememberingBackbone(build_backbone(settings))


def tuning_pairs(
    backbone: Backbone,
    method: str,
    files: list[Path] | None,
    no_tune: bool,
    settings: Settings,
    evaluated: Path | None = None,
) -> TuningPairs | None:
    """Encoded tuning pairs for `auto` (None for the other methods, or with --no-tune)."""
    if method != Method.AUTO or no_tune:
        return None
    from app.correction.selection import TuningPairs
    from app.offline.datasets import read_pairs
    from app.offline.encoding import encode_pairs

    files = files or list(TUNE_PAIRS)
    if evaluated is not None and any(Path(f).resolve() == Path(evaluated).resolve() for f in files):
        typer.secho("warning: tuning on the evaluated pairs overstates the score", fg=typer.colors.YELLOW, err=True)
    return TuningPairs.concat([encode_pairs(backbone, read_pairs(f), name=Path(f).name) for f in files])


def judged_sets(backbone: Backbone, folders: list[Path] | None, settings: Settings) -> list[JudgedSet] | None:
    """Judged collections encoded for choosing or scoring a search space (None without folders); documents and
    queries are cached by content, so a second run encodes nothing."""
    if not folders:
        return None
    from app.offline.encoding import encode_all
    from app.offline.retrieval import cached_encoding
    from app.offline.search_tuning import read_judged

    cache = settings.data_dir / "cache" / "retrieval"

    def encode(texts: list[str], what: str) -> np.ndarray:
        return cached_encoding(lambda t: encode_all(backbone, t, desc=what), texts, backbone.fingerprint, cache)

    return read_judged(folders, encode)


def fit_here_or_on_ray(
    settings: Settings,
    backbone: Backbone,
    sentences: Sequence[str],
    method: str,
    params: dict[str, Any],
    source: str,
    tuning: TuningPairs | None,
    engine: str,
    address: str | None,
    workers: int,
    judged: list[JudgedSet] | None = None,
) -> CorrectionArtifact:
    """The same fit, with the corpus encoded here or by Ray actors whose statistics are reduced."""
    from app.offline.fit import ISOTROPY_SAMPLE, corpus_ref, fit_artifact, fit_from_stats, sample_rows

    if engine == "local":
        return fit_artifact(backbone, sentences, method, params, source=source, tuning=tuning, judged=judged)
    if method in ALSO_METHODS or params.get("also"):
        raise ValueError(f"{method} {params} trains on the vectors themselves: use --engine local")
    from app.offline.distributed import encode_stats_on_ray, ray_session

    with ray_session(address, workers):
        stats, sample = encode_stats_on_ray(settings, sentences, workers=workers)
    sample = sample_rows(sample, ISOTROPY_SAMPLE)
    corpus = corpus_ref(sentences, source)
    return fit_from_stats(backbone, corpus, stats, sample, method, params, tuning=tuning, judged=judged)
