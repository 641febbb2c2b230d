"""Offline fitting: stream a corpus through a backbone into statistics, then into an artifact."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from tqdm.auto import tqdm

from app.backbones.base import Backbone
from app.correction import CorrectionArtifact, CovarianceStats, fit_correction
from app.correction.artifact import BackboneRef, CorpusRef
from app.datasets import corpus_sha256

CHUNK = 512


def encode_all(backbone: Backbone, texts: Sequence[str], *, desc: str = "encoding", progress: bool = True):
    """Encode a long list in chunks with a progress bar; returns float32 (n, dim)."""
    out = np.empty((len(texts), backbone.dim), dtype=np.float32)
    with tqdm(total=len(texts), desc=desc, unit="text", disable=not progress, leave=False) as bar:
        for start in range(0, len(texts), CHUNK):
            chunk = texts[start : start + CHUNK]
            out[start : start + len(chunk)] = backbone.encode(chunk)
            bar.update(len(chunk))
    return out


def backbone_ref(backbone: Backbone) -> BackboneRef:
    return BackboneRef(name=backbone.name, fingerprint=backbone.fingerprint, dim=backbone.dim, pooling=backbone.pooling)


def fit_from_vectors(
    backbone: Backbone, sentences: Sequence[str], vectors: np.ndarray, method: str, params: dict, source: str = ""
) -> CorrectionArtifact:
    """Fit `method` on vectors already encoded by `backbone` from `sentences`."""
    stats = CovarianceStats(backbone.dim).update(vectors)
    mu, W = fit_correction(stats, method, **params)
    return CorrectionArtifact.create(
        method=method,
        params=params,
        backbone=backbone_ref(backbone),
        corpus=CorpusRef(size=len(sentences), sha256=corpus_sha256(list(sentences)), source=source),
        mu=mu,
        W=W,
    )


def fit_artifact(
    backbone: Backbone,
    sentences: Sequence[str],
    method: str,
    params: dict,
    *,
    source: str = "",
    progress: bool = True,
) -> CorrectionArtifact:
    """Encode the corpus and fit `method` with `params` on it."""
    vectors = encode_all(backbone, sentences, desc="fitting corpus", progress=progress)
    return fit_from_vectors(backbone, sentences, vectors, method, params, source)
