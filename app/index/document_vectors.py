"""Stored documents to vectors: their raw vectors decoded, every passage keyed for the index, and mapped into a
correction's search space (or encoded again, for a correction that pools its own way)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import numpy as np

from app.core.stored_vectors import from_stored
from app.correction.pipeline import Correction, pooling_weights, project
from app.index.passages import passage_key, passage_of, spans_fault, stored_spans
from app.store.documents import DocumentRecord
from app.store.redis_store import RedisStore

# texts, token weights -> raw float32 vectors: how documents are encoded again for a correction that pools its own way
Encode = Callable[[Sequence[str], np.ndarray], np.ndarray]
POOL_BATCH = 256  # texts per call when documents are encoded again for a correction that pools its own way


class DocumentVectors:
    """One collection's stored documents as vectors, in any correction's space."""

    def __init__(
        self,
        store: RedisStore,
        collection_key: str,
        raw_dim: int,
        *,
        encode: Encode | None = None,
        keys_only: bool = False,
    ):
        self.store = store
        self.collection_key = collection_key
        self.raw_dim = raw_dim
        self.encode = encode  # for a correction that pools its own way (SIF): documents are encoded again
        self.keys_only = keys_only  # a sharded server's index: its shards compute the vectors

    def fault(self, record: DocumentRecord) -> str | None:
        """Why a stored record cannot be indexed (passages that are not spans of its text, vectors not one per
        passage of this dim, metadata that is not a JSON object), or None."""
        if (wrong := spans_fault(record.passages, len(record.text))) is not None:
            return wrong
        rows = len(stored_spans(record.passages, record.text))
        try:
            expected = rows * self.raw_dim * np.dtype(record.vector_dtype).itemsize
        except TypeError:
            return f"vectors: unknown dtype {record.vector_dtype!r}"
        if len(record.vector) != expected:
            return f"vectors: {len(record.vector)} bytes of {record.vector_dtype} for {rows} passages of {self.raw_dim}"
        try:
            metadata = json.loads(record.metadata_json)
        except (ValueError, RecursionError):
            metadata = None
        return None if isinstance(metadata, dict) else "metadata: not a JSON object"

    def decode(self, docs: Sequence[DocumentRecord]) -> np.ndarray:
        """Every passage's raw vector, documents in order, passages in order within each."""
        return from_stored([d.vector for d in docs], [d.vector_dtype for d in docs], self.raw_dim)

    def passages(self, docs: Sequence[DocumentRecord]) -> tuple[list[str], list[str], np.ndarray]:
        """Index keys, texts and raw vectors of every passage of `docs`."""
        keys: list[str] = []
        texts: list[str] = []
        for d in docs:
            spans = stored_spans(d.passages, d.text)
            keys.extend(passage_key(d.id, n) for n in range(len(spans)))
            texts.extend(d.text[s:e] for s, e in spans)
        raw = self.decode(docs)
        if len(raw) != len(keys):
            raise ValueError(f"{len(raw)} stored vectors for {len(keys)} passages")
        return keys, texts, raw

    def passage_vectors(
        self, docs: Sequence[DocumentRecord], correction: Correction | None
    ) -> tuple[list[str], np.ndarray]:
        """Index keys and vectors, in `correction`'s search space, of every passage of `docs`."""
        keys, texts, raw = self.passages(docs)
        return keys, self._mapped(correction.search if correction else None, texts, raw)

    def indexed(
        self, docs: Sequence[DocumentRecord], correction: Correction | None
    ) -> tuple[list[str], np.ndarray | None]:
        """What the dense index takes of `docs`: passage keys and vectors; the keys alone for a sharded server's,
        whose shards compute their own vectors (nothing decoded or projected here)."""
        if self.keys_only:
            return [passage_key(d.id, n) for d in docs for n in range(len(stored_spans(d.passages, d.text)))], None
        return self.passage_vectors(docs, correction)

    def exact_vectors(self, correction: Correction | None, dim: int) -> Callable[[Sequence[str]], np.ndarray]:
        """Index keys -> their vectors in `correction`'s search space, read from the store (NaN rows for keys no
        longer stored): what a compressed index's candidates are re-scored with."""

        def vectors(keys: Sequence[str]) -> np.ndarray:
            ids = list(dict.fromkeys(passage_of(key)[0] for key in keys))
            stored = [r for r in self.store.documents.get(self.collection_key, ids) if r is not None]
            found_keys, found = self.passage_vectors(stored, correction)
            row = {key: i for i, key in enumerate(found_keys)}
            out = np.full((len(keys), dim), np.nan, dtype=np.float32)
            for i, key in enumerate(keys):
                if key in row:
                    out[i] = found[row[key]]
            return out

        return vectors

    def in_space(self, docs: list[DocumentRecord], correction: Correction | None, *, search: bool = True) -> np.ndarray:
        """Documents (their first passage) in `correction`'s search space (or its similarity space): their stored
        raw vectors mapped, or their texts pooled its way (SIF)."""
        first = [stored_spans(d.passages, d.text)[0] for d in docs]
        mapped = (correction.search if search else correction) if correction else None
        texts = [d.text[s:e] for d, (s, e) in zip(docs, first, strict=True)]
        return self._mapped(mapped, texts, self.first_vectors(docs))

    def first_vectors(self, docs: list[DocumentRecord]) -> np.ndarray:
        """Each document's first passage's raw vector: one row per document."""
        return from_stored([d.vector for d in docs], [d.vector_dtype for d in docs], self.raw_dim, first_only=True)

    def _mapped(self, correction: Correction | None, texts: list[str], raw: np.ndarray) -> np.ndarray:
        """Raw vectors in `correction`'s space; a correction that pools its own way (SIF) encodes the texts again."""
        weights = pooling_weights(correction)
        return project(raw if weights is None else self._encode_in_batches(texts, weights), correction)

    def _encode_in_batches(self, texts: list[str], weights: np.ndarray) -> np.ndarray:
        if self.encode is None:
            raise RuntimeError("this correction pools with token weights, and no encoder was given")
        raw = [self.encode(texts[i : i + POOL_BATCH], weights) for i in range(0, len(texts), POOL_BATCH)]
        return np.concatenate(raw) if raw else np.empty((0, self.raw_dim), dtype=np.float32)
