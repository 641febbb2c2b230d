"""Texts to vectors for offline commands: in chunks with a progress bar, each text once, in a correction's space."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from tqdm.auto import tqdm

from app.backbones.base import Backbone
from app.backbones.prompts import prompted
from app.correction import Correction
from app.correction.pipeline import pooling_weights, project
from app.correction.selection import TuningPairs
from app.offline.datasets import Pairs

CHUNK = 512


def encode_all(
    backbone: Backbone,
    texts: Sequence[str],
    *,
    desc: str = "encoding",
    progress: bool = True,
    token_weights: np.ndarray | None = None,
) -> np.ndarray:
    """Encode a long list in chunks with a progress bar; returns float32 (n, dim). `token_weights`: SIF's. Each text
    gets the model's document prompt: a correction is fitted on vectors as the index holds them."""
    out = np.empty((len(texts), backbone.dim), dtype=np.float32)
    extra = {} if token_weights is None else {"token_weights": token_weights}
    with tqdm(total=len(texts), desc=desc, unit="text", disable=not progress, leave=False) as bar:
        for start in range(0, len(texts), CHUNK):
            chunk = texts[start : start + CHUNK]
            out[start : start + len(chunk)] = backbone.encode(prompted(backbone.prompts.document, chunk), **extra)
            bar.update(len(chunk))
    return out


class RememberingBackbone:
    """Wraps a backbone for one offline command: a text seen twice (corpus and tuning pairs) is encoded once."""

    def __init__(self, backbone: Backbone):
        self._backbone = backbone
        self._seen: dict[str, np.ndarray] = {}
        self.name, self.fingerprint, self.prompts = backbone.name, backbone.fingerprint, backbone.prompts
        self.dim, self.pooling = backbone.dim, backbone.pooling
        self.max_length, self.vocab_size, self.runtime = backbone.max_length, backbone.vocab_size, backbone.runtime
        self.token_counts, self.token_ids = backbone.token_counts, backbone.token_ids
        self.tokens_of = backbone.tokens_of

    def encode(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        if token_weights is not None:  # reweighted pooling: other vectors than the ones remembered
            return self._backbone.encode(texts, token_weights=token_weights)
        new = list(dict.fromkeys(t for t in texts if t not in self._seen))
        if new:
            self._seen.update(zip(new, self._backbone.encode(new), strict=True))
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        return np.stack([self._seen[t] for t in texts])


def encode_pairs(backbone: Backbone, pairs: Pairs, *, name: str = "", progress: bool = True) -> TuningPairs:
    """Both sides of labelled pairs as vectors, ready to score corrections on."""
    vectors = encode_all(backbone, pairs.left + pairs.right, desc=f"pairs {name}".strip(), progress=progress)
    n = len(pairs)
    return TuningPairs(vectors[:n], vectors[n:], pairs.scores, name, (list(pairs.left), list(pairs.right)))


def corrected_vectors(
    backbone: Backbone,
    correction: Correction | None,
    texts: Sequence[str],
    raw: np.ndarray | None = None,
    *,
    desc: str = "encoding",
    progress: bool = True,
) -> np.ndarray:
    """`texts` in the correction's space: their `raw` vectors mapped, or, when there are none or the correction
    pools its own way (SIF), the texts encoded for it in chunks with a progress bar."""
    weights = pooling_weights(correction)
    if raw is None or weights is not None:
        raw = encode_all(backbone, texts, desc=desc, progress=progress, token_weights=weights)
    return project(raw, correction)
