"""Offline fitting: stream a corpus through a backbone into statistics, then into an artifact."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from app.backbones.base import Backbone
from app.core.names import ALSO_METHODS, TOKEN_AVERAGES, Method, Pooling
from app.correction import Correction, CorrectionArtifact, CovarianceStats, fit_correction
from app.correction.artifact import BackboneRef, CorpusRef
from app.correction.isotropy import isotropy_report, space_geometry
from app.correction.pipeline import l2_normalize
from app.correction.selection import (
    MIN_GAIN,
    Candidate,
    TuningPairs,
    default_choice,
    gain_lower_bound,
    select_for,
)
from app.correction.sif import DEFAULT_A, remove_first_component, sif_weights, token_counts
from app.correction.sif import WEIGHTS_KEY as SIF_WEIGHTS
from app.offline.datasets import corpus_sha256
from app.offline.encoding import corrected_vectors, encode_all
from app.offline.evaluation import spearman_x100
from app.offline.search_tuning import JudgedSet, choose_search

ISOTROPY_SAMPLE = 20_000  # rows of the fitting corpus the isotropy figures are computed on
GEOMETRY_SAMPLE = 5_000  # rows its uniformity is computed on (200,000 random pairs of them)
FLOW_PARAMS = ("blocks", "hidden", "lr", "max_seconds")  # of FlowTraining, settable from the command line


def backbone_ref(backbone: Backbone) -> BackboneRef:
    return BackboneRef(name=backbone.name, fingerprint=backbone.fingerprint, dim=backbone.dim, pooling=backbone.pooling)


def corpus_ref(sentences: Sequence[str], source: str = "") -> CorpusRef:
    """The fitting corpus as an artifact records it: by size and hash, and where it came from."""
    return CorpusRef(size=len(sentences), sha256=corpus_sha256(list(sentences)), source=source)


def new_artifact(
    backbone: Backbone,
    corpus: CorpusRef,
    method: str,
    params: dict[str, Any],
    mu: np.ndarray,
    W: np.ndarray,
    arrays: dict[str, np.ndarray] | None = None,
) -> CorrectionArtifact:
    """An artifact of `method` fitted on `corpus` for `backbone`, with what its fingerprint was made of (so a
    refusal can name the part that differs)."""
    artifact = CorrectionArtifact.create(
        method=method, params=params, backbone=backbone_ref(backbone), corpus=corpus, mu=mu, W=W, arrays=arrays
    )
    parts = getattr(backbone, "fingerprint_parts", None)  # a model folder's backbone has them
    return replace(artifact, extra={"backbone": parts}) if parts else artifact


def sample_rows(x: np.ndarray, limit: int, *, seed: int = 0) -> np.ndarray:
    """At most `limit` rows, drawn without replacement; all of them when there are fewer."""
    if len(x) <= limit:
        return x
    return x[np.sort(np.random.default_rng(seed).choice(len(x), limit, replace=False))]


def fit_from_vectors(
    backbone: Backbone,
    sentences: Sequence[str],
    vectors: np.ndarray,
    method: str,
    params: dict[str, Any],
    source: str = "",
    *,
    tuning: TuningPairs | None = None,
    judged: list[JudgedSet] | None = None,
    progress: bool = True,
) -> CorrectionArtifact:
    """Fit `method` on vectors already encoded by `backbone` from `sentences`; `auto` scores on `tuning`, the
    search space on `judged` collections (or by the documented default without them)."""
    if method in (Method.FLOW, Method.SIF):
        fit = fit_flow if method == Method.FLOW else fit_sif
        artifact = with_search_space(fit(backbone, sentences, vectors, params, source, progress), vectors, judged)
        return replace(artifact, extra={**artifact.extra, "geometry": geometry(artifact, vectors, tuning)})
    if method == Method.AUTO and params.get("also"):
        return fit_auto_also(backbone, sentences, vectors, params["also"], source, tuning, progress, judged)
    stats, sample = CovarianceStats(backbone.dim).update(vectors), sample_rows(vectors, ISOTROPY_SAMPLE)
    corpus = corpus_ref(sentences, source)
    return fit_from_stats(backbone, corpus, stats, sample, method, params, tuning=tuning, judged=judged)


def fit_from_stats(
    backbone: Backbone,
    corpus: CorpusRef,
    stats: CovarianceStats,
    sample: np.ndarray,
    method: str,
    params: dict[str, Any],
    *,
    tuning: TuningPairs | None = None,
    judged: list[JudgedSet] | None = None,
) -> CorrectionArtifact:
    """Fit from statistics gathered anywhere (one process, or reduced from many); `sample` gives the isotropy."""
    extra: dict[str, Any] = {}
    if method == Method.AUTO:
        if tuning is None:
            method, params = default_choice(backbone.dim)
            extra["selection"] = {"tuned_on": None, "rule": "documented default (no tuning pairs)"}
        else:
            selection = select_for(stats, tuning)
            method, params = selection.chosen.method, selection.chosen.params
            extra["selection"] = selection.record()
    mu, W = fit_correction(stats, method, **params)
    raw = isotropy_report(sample)
    search = choose_search(method, params, stats, raw["mean_random_cosine"], judged)
    artifact = new_artifact(backbone, corpus, method, params, mu, W, search.arrays)
    extra["isotropy"] = {"raw": raw, "corrected": isotropy_report(Correction(artifact).apply(sample))}
    extra["geometry"] = geometry(artifact, sample, tuning)
    extra["search"] = search.describe()
    return replace(artifact, extra={**artifact.extra, **extra})  # the id hashes arrays and parameters, not this


def fit_flow(
    backbone: Backbone,
    sentences: Sequence[str],
    vectors: np.ndarray,
    params: dict[str, Any],
    source: str = "",
    progress: bool = True,
) -> CorrectionArtifact:
    """BERT-flow: a flow trained to map the vectors onto N(0, I), optionally followed by whitening of its output."""
    from app.correction.flow_training import FlowTraining, train_flow

    config = FlowTraining(**{k: params[k] for k in FLOW_PARAMS if params.get(k) is not None})
    flow, history = train_flow(vectors, config, progress=progress)
    alpha = params.get("whiten")
    if alpha:
        stats = CovarianceStats(backbone.dim).update(flow.forward(vectors))
        mu, W = fit_correction(stats, Method.WHITENING, alpha=alpha)
    else:
        mu, W = np.zeros(backbone.dim), np.eye(backbone.dim)
    params = {**{k: getattr(config, k) for k in FLOW_PARAMS}, "whiten": alpha}
    artifact = new_artifact(backbone, corpus_ref(sentences, source), Method.FLOW, params, mu, W, flow.to_arrays())
    extra = {
        "flow": {
            "epochs": len(history) - 1,
            "heldout_log_likelihood": {"start": round(history[0], 4), "best": round(max(history), 4)},
        },
        "isotropy": isotropy_pair(artifact, vectors),
    }
    return replace(artifact, extra={**artifact.extra, **extra})


def fit_sif(
    backbone: Backbone,
    sentences: Sequence[str],
    raw: np.ndarray,
    params: dict[str, Any],
    source: str = "",
    progress: bool = True,
) -> CorrectionArtifact:
    """SIF: token weights from the corpus's own counts, the corpus pooled with them, its first component removed."""
    if not Pooling(backbone.pooling).averages_tokens:
        averaging = " or ".join(TOKEN_AVERAGES)
        raise ValueError(f"sif reweights the tokens of the {averaging} pooling, not {backbone.pooling}")
    a = params.get("a", DEFAULT_A)
    weights = sif_weights(token_counts(backbone.token_ids(sentences), backbone.vocab_size), a)
    vectors = encode_all(backbone, sentences, desc="fitting corpus (SIF)", progress=progress, token_weights=weights)
    mu, W = remove_first_component(vectors)
    artifact = new_artifact(
        backbone, corpus_ref(sentences, source), Method.SIF, {"a": a}, mu, W, {SIF_WEIGHTS: weights}
    )
    return replace(artifact, extra={**artifact.extra, "isotropy": isotropy_pair(artifact, raw, vectors)})


def with_search_space(
    artifact: CorrectionArtifact, raw: np.ndarray, judged: list[JudgedSet] | None
) -> CorrectionArtifact:
    """A correction fitted on the vectors themselves (flow, SIF) with its search space added (a new id)."""
    cosine = isotropy_report(sample_rows(raw, ISOTROPY_SAMPLE))["mean_random_cosine"]
    search = choose_search(artifact.method, artifact.params, CovarianceStats(raw.shape[1]).update(raw), cosine, judged)
    a = artifact
    return CorrectionArtifact.create(
        method=a.method,
        params=a.params,
        backbone=a.backbone,
        corpus=a.corpus,
        mu=a.mu,
        W=a.W,
        arrays={**a.arrays, **search.arrays},
        extra={**a.extra, "search": search.describe()},
    )


def fit_auto_also(
    backbone: Backbone,
    sentences: Sequence[str],
    vectors: np.ndarray,
    also: dict[str, dict[str, Any]],
    source: str,
    tuning: TuningPairs | None,
    progress: bool = True,
    judged: list[JudgedSet] | None = None,
) -> CorrectionArtifact:
    """`auto` with flow and/or SIF (`also`: method -> its params) competing: each is fitted, scored on the tuning
    pairs like the linear choice, and replaces it only if its gain's 95% bootstrap lower bound is worth MIN_GAIN."""
    linear = fit_from_vectors(
        backbone, sentences, vectors, Method.AUTO, {}, source, tuning=tuning, judged=judged, progress=progress
    )
    others = [m for m in also if m in ALSO_METHODS and applies_to(m, backbone.pooling)]
    if tuning is None or tuning.texts is None or not others:
        return linear
    base = scored_on(backbone, linear, tuning)
    fitted = [
        fit_from_vectors(
            backbone, sentences, vectors, m, also[m], source, tuning=tuning, judged=judged, progress=progress
        )
        for m in others
    ]
    scored = [(scored_on(backbone, a, tuning), a) for a in fitted]
    best, best_artifact = max(scored, key=lambda pair: pair[0].score)
    lower = gain_lower_bound(best, base, tuning.gold) if best.score > base.score else 0.0
    chosen = best_artifact if lower >= MIN_GAIN else linear
    record = {
        **linear.extra.get("selection", {}),
        "also": {c.method: round(c.score, 2) for c, _ in scored},
        "linear_choice": {"method": linear.method, "params": linear.params, "score": round(base.score, 2)},
        "also_gain_lower_bound": round(lower, 2),
    }
    return replace(chosen, extra={**chosen.extra, "selection": record})


def scored_on(backbone: Backbone, artifact: CorrectionArtifact | None, tuning: TuningPairs) -> Candidate:
    """A fitted correction (None: raw vectors) scored on the tuning pairs as `auto` scores its candidates."""
    texts = tuning.texts[0] + tuning.texts[1] if tuning.texts else []
    raw = np.vstack([tuning.left, tuning.right])
    correction = Correction(artifact) if artifact else None
    y = corrected_vectors(backbone, correction, texts, raw, progress=False) if correction else l2_normalize(raw)
    left, right = y[: len(tuning.gold)], y[len(tuning.gold) :]
    method, params, dim = (
        (artifact.method, artifact.params, artifact.out_dim) if artifact else (Method.NONE, {}, raw.shape[1])
    )
    return Candidate(method, params, dim, spearman_x100(left, right, tuning.gold), 0.0, np.sum(left * right, axis=1))


def geometry(artifact: CorrectionArtifact, vectors: np.ndarray, tuning: TuningPairs | None) -> dict[str, Any]:
    """Alignment on the tuning pairs' paraphrases and uniformity on (a sample of) the fitting corpus, raw and
    corrected; see `isotropy.space_geometry`."""
    sample = sample_rows(vectors, GEOMETRY_SAMPLE)
    return space_geometry(Correction(artifact), sample, tuning.arrays if tuning is not None else None)


def isotropy_pair(artifact: CorrectionArtifact, raw: np.ndarray, pooled: np.ndarray | None = None) -> dict[str, Any]:
    """Isotropy of the fitting corpus's vectors, as the backbone gives them and corrected (from `pooled`: SIF's)."""
    pooled = raw if pooled is None else pooled
    corrected = Correction(artifact).apply(sample_rows(pooled, ISOTROPY_SAMPLE))
    return {"raw": isotropy_report(sample_rows(raw, ISOTROPY_SAMPLE)), "corrected": isotropy_report(corrected)}


def applies_to(method: str, pooling: str) -> bool:
    """SIF reweights the tokens of an average, so it has no meaning for CLS or a mix of layers."""
    return method != Method.SIF or Pooling(pooling).averages_tokens


def fit_artifact(
    backbone: Backbone, sentences: Sequence[str], method: str, params: dict[str, Any], **options: Any
) -> CorrectionArtifact:
    """Encode the corpus, then fit `method` with `params` on it (`options` as `fit_from_vectors` takes them)."""
    vectors = encode_all(backbone, sentences, desc="fitting corpus", progress=options.get("progress", True))
    return fit_from_vectors(backbone, sentences, vectors, method, params, **options)
