"""A correction fitted on a collection's own documents: their raw vectors are in Redis, so nothing is re-encoded.

Refitting on a domain's own unlabelled sentences is not free for a contrastive model (measured on five public
STS sets: below the general fit on all five, below raw on three), so `auto` keeps the general correction
unless the collection's own fit clearly beats it on labelled pairs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from app.backbones.base import Backbone
from app.core.errors import InvalidInput
from app.core.names import Method
from app.correction.artifact import CorrectionArtifact
from app.correction.selection import MIN_GAIN, TuningPairs, gain_lower_bound
from app.index.builder import IndexBuilder
from app.offline.fit import fit_from_vectors, scored_on
from app.offline.search_tuning import JudgedSet
from app.store.documents import DocumentRecord
from app.store.redis_store import RedisStore


def stored_documents(
    store: RedisStore, collection_key: str, dim: int, limit: int | None = None
) -> tuple[list[DocumentRecord], np.ndarray]:
    """A collection's stored documents and raw vectors, in one order (the first `limit` Redis hands out, if given)."""
    builder = IndexBuilder(store, collection_key, dim)
    docs: list[DocumentRecord] = []
    chunks = []
    for batch in store.documents.scan(collection_key):
        batch = batch[: None if limit is None else limit - len(docs)]
        docs.extend(batch)
        chunks.append(builder.vectors.first_vectors(batch))  # one row per document: a long one by its first passage
        if limit is not None and len(docs) >= limit:
            break
    return docs, np.concatenate(chunks) if chunks else np.empty((0, dim), dtype=np.float32)


def stored_corpus(store: RedisStore, collection_key: str, dim: int) -> tuple[list[str], np.ndarray]:
    """A collection's stored texts and raw vectors, in one order."""
    docs, vectors = stored_documents(store, collection_key, dim)
    return [d.text for d in docs], vectors


def guarded_choice(
    backbone: Backbone, own: CorrectionArtifact, general: CorrectionArtifact | None, tuning: TuningPairs
) -> tuple[CorrectionArtifact | None, dict[str, Any]]:
    """The collection's own fit if its gain over the general correction (or raw) on the tuning pairs has a 95%
    bootstrap lower bound of MIN_GAIN, else the general one; and the comparison (kept in the own fit's extra)."""
    mine, theirs = scored_on(backbone, own, tuning), scored_on(backbone, general, tuning)
    lower = gain_lower_bound(mine, theirs, tuning.gold)
    chosen = own if lower >= MIN_GAIN else general
    record = {
        "own_fit": round(mine.score, 2),
        "general": general.id if general else None,
        "general_score": round(theirs.score, 2),
        "gain_lower_bound": round(lower, 2),
        "tuned_on": tuning.name,
        "rule": f"own fit only if its gain's 95% lower bound >= {MIN_GAIN}",
    }
    if chosen is own:
        chosen = replace(own, extra={**own.extra, "collection_choice": record})
    return chosen, record


def fit_collection_correction(
    store: RedisStore,
    collection_key: str,
    backbone: Backbone,
    method: str,
    params: dict[str, Any],
    general: CorrectionArtifact | None,
    tuning: TuningPairs | None,
    judged: list[JudgedSet] | None,
    say: Callable[[str], None],
) -> CorrectionArtifact | None:
    """A correction fitted on the collection's stored raw vectors; with `auto`, kept only if it clearly beats the
    general one (`guarded_choice`). None: keep the general correction."""
    if method == Method.AUTO and tuning is None:
        say("without labelled pairs `auto` keeps the general correction")
        return None
    sentences, vectors = stored_corpus(store, collection_key, backbone.dim)
    if not sentences:
        raise InvalidInput("the collection holds no documents to fit on")
    chosen: CorrectionArtifact | None = fit_from_vectors(
        backbone, sentences, vectors, method, params, collection_key, tuning=tuning, judged=judged
    )
    if method == Method.AUTO and chosen is not None and tuning is not None:
        chosen, record = guarded_choice(backbone, chosen, general, tuning)
        say(json.dumps(record))
    if chosen is None or (general is not None and chosen.id == general.id):
        say("the collection's own fit was not clearly better")
        return None
    return chosen
