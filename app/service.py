"""The one place that joins backbone -> correction -> index, shared by the API and the CLI."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from app.artifacts import check_compatible, load_current, publish, resolve_correction
from app.backbones.base import Backbone, build_backbone
from app.batching import BatchingEngine
from app.core.errors import ArtifactError, InvalidInput, NotFound
from app.core.settings import Settings
from app.correction.artifact import Correction, CorrectionArtifact, l2_normalize, project
from app.datasets import DocumentInput
from app.index.fields import FilterError
from app.index.vector_index import VectorIndex
from app.indexing import SearchSpace, SpaceKeeper
from app.live_index import LiveIndex
from app.store.embedded import EmbeddedRedis
from app.store.redis_store import DocumentRecord, RedisStore

log = logging.getLogger(__name__)
MAX_ID_LENGTH = 256


def document_id(text: str) -> str:
    """Default id: a hash of the text, so ingesting the same text twice never duplicates it."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def document_records(encode, docs: Sequence[DocumentInput]) -> list[DocumentRecord]:
    """Ids (given, or the text's hash), a repeated id's last version, raw vectors: what the store keeps.

    The API, `index` and `index --engine ray` all go through here, so the same input gives the same ids.
    `encode` may be a backbone's or the service's; only its raw vectors are used.
    """
    ids = [d.id if d.id is not None else document_id(d.text) for d in docs]
    for i, doc_id in enumerate(ids):
        if not doc_id or len(doc_id) > MAX_ID_LENGTH:
            raise InvalidInput(f"documents[{i}].id must have 1 to {MAX_ID_LENGTH} characters")
    last = {doc_id: i for i, doc_id in enumerate(ids)}  # a repeated id: the last one wins
    keep = sorted(last.values())
    raw = encode([docs[i].text for i in keep])
    return [
        DocumentRecord(ids[i], docs[i].text, json.dumps(docs[i].metadata or {}), raw[row].tobytes())
        for row, i in enumerate(keep)
    ]


def connect_store(settings: Settings) -> tuple[RedisStore, EmbeddedRedis | None]:
    """The store at REDIS_URL, or on an embedded redis-server (returned too, so its owner can stop it)."""
    embedded = None
    url = settings.redis_url
    if not url:
        embedded = EmbeddedRedis(settings.data_dir / "redis")
        url = embedded.start()
    return RedisStore.from_url(url, prefix=settings.key_prefix), embedded


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    metadata: dict

    @classmethod
    def from_record(cls, record: DocumentRecord) -> Document:
        return cls(record.id, record.text, json.loads(record.metadata_json))


@dataclass(frozen=True)
class SearchHit(Document):
    score: float = 0.0


class EmbeddingService:
    """Encodes, corrects, scores and searches; owns the backbone, the store and the index."""

    def __init__(
        self,
        settings: Settings,
        engine: BatchingEngine,
        store: RedisStore,
        artifact: CorrectionArtifact | None,
        *,
        embedded: EmbeddedRedis | None = None,
        search: bool = True,
    ):
        self.settings = settings
        self.engine = engine
        self.backbone = engine.backbone
        self.store = store
        self._embedded = embedded
        self._refused: str | None = None  # a published artifact id that failed to load
        keeper = SpaceKeeper(
            store,
            self.backbone.fingerprint,
            self.backbone.dim,
            factory=settings.index_factory,
            recall=settings.index_recall,
            snapshot_dir=settings.data_dir / "index",
            pool=self.encode_raw,
        )
        correction = Correction(artifact) if artifact else None
        # A writer only (`python -m app index`) needs no index: the servers follow its writes.
        self._live = (
            LiveIndex(
                keeper,
                correction,
                published=self._published_correction,
                follow_interval=settings.follow_interval,
                snapshot_interval=settings.snapshot_interval,
            )
            if search
            else None
        )
        self._writer_space = None if search else keeper.empty(correction)
        self._writer_lock = threading.Lock()

    @classmethod
    def from_settings(
        cls, settings: Settings, backbone: Backbone | None = None, *, search: bool = True
    ) -> EmbeddingService:
        """Connect the store, load the backbone (in the encoder thread) and its correction, open the index."""
        store, embedded = connect_store(settings)
        engine = None
        try:
            engine = BatchingEngine(
                backbone or (lambda: build_backbone(settings)),
                max_queue_texts=settings.max_queue_texts,
                round_texts=settings.batch_size,
            )
            artifact = resolve_correction(settings.correction, store, engine.backbone, settings.models_dir)
            service = cls(settings, engine, store, artifact, embedded=embedded, search=search)
            service.encode_raw(["warm-up: the first forward pass allocates what the next ones reuse"])
            return service
        except BaseException:
            if engine is not None:
                engine.close()
            store.close()
            if embedded:
                embedded.stop()
            raise

    def close(self) -> None:
        """Finish the queued encoding work and any rebuild, snapshot the index, then let go of the store."""
        if self._live is not None:
            self._live.close()
        self.engine.close()
        self.store.close()
        if self._embedded:
            self._embedded.stop()

    # --- vector spaces -----------------------------------------------------------------------------

    @property
    def space_id(self) -> str:
        """Documents' raw vectors belong to one backbone; they are stored under its fingerprint."""
        return self.backbone.fingerprint

    @property
    def _space(self) -> SearchSpace:
        return self._live.space if self._live is not None else self._writer_space

    @contextmanager
    def _writing(self) -> Iterator[SearchSpace]:
        if self._live is not None:
            with self._live.writing() as space:
                yield space
        else:
            with self._writer_lock:
                yield self._writer_space

    @property
    def correction(self) -> Correction | None:
        return self._space.correction

    @property
    def index(self) -> VectorIndex:
        return self._space.index

    @property
    def dim(self) -> int:
        correction = self._space.correction
        return correction.dim if correction else self.backbone.dim

    def publish_correction(self, artifact: CorrectionArtifact) -> Future:
        """Cache in Redis as current, then rebuild the index from raw vectors in the background and swap."""
        check_compatible(artifact, self.backbone)
        publish(self.store, artifact)
        return self._live.rebuild(Correction(artifact), f"correction {artifact.id} published")

    def _published_correction(self, space: SearchSpace) -> Correction | None:
        """The correction Redis marks current, if it is not the one `space` serves; only `auto` follows Redis."""
        if self.settings.correction != "auto":
            return None  # `none` and a pinned file stay as configured
        current = self.store.current_artifact_id(self.space_id)
        if not current or current in (space.correction_id, self._refused):
            return None
        try:
            artifact = load_current(self.store, self.backbone)
        except ArtifactError as exc:
            log.error("refusing the published artifact; %s keeps serving: %s", space.correction_id, exc)
            self._refused = current  # said once, not at every follow
            return None
        return Correction(artifact) if artifact is not None and artifact.id == current else None

    def wait_for_index(self, timeout: float | None = None) -> None:
        """Block until a running rebuild has swapped in (tests and the CLI use it)."""
        self._live.wait(timeout)

    def snapshot(self) -> None:
        self._live.snapshot()

    # --- encoding ------------------------------------------------------------------------------------

    def _check_texts(self, texts: Sequence[str], what: str = "texts") -> Sequence[str]:
        limits = self.settings
        if len(texts) > limits.max_texts:
            raise InvalidInput(f"{what}: {len(texts)} items, at most {limits.max_texts} per request")
        for i, text in enumerate(texts):
            if len(text) > limits.max_text_chars:
                raise InvalidInput(f"{what}[{i}]: {len(text)} characters, at most {limits.max_text_chars}")
        return texts

    @staticmethod
    def _dedupe(texts: Sequence[str]) -> tuple[list[str], list[int] | None]:
        """Distinct texts, and the row of each input among them (None when all are distinct)."""
        unique = list(dict.fromkeys(texts))
        if len(unique) == len(texts):
            return unique, None
        row = {t: i for i, t in enumerate(unique)}
        return unique, [row[t] for t in texts]

    def encode_raw(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        """The backbone's vectors, unnormalized; each distinct text is encoded once. `token_weights`: SIF's pooling."""
        unique, rows = self._dedupe(texts)
        vectors = self.engine.encode(unique, token_weights)
        return vectors if rows is None else vectors[rows]

    async def encode_raw_async(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        """encode_raw() for the event loop: waits on the encoder without holding a thread."""
        unique, rows = self._dedupe(texts)
        if not unique:
            return self.engine.encode([])
        vectors = await asyncio.wrap_future(self.engine.submit(unique, token_weights))
        return vectors if rows is None else vectors[rows]

    def _served(self, corrected: bool) -> tuple[Correction | None, np.ndarray | None]:
        """The correction vectors are served in (None for raw) and the pooling weights it encodes with (SIF)."""
        correction = self._space.correction if corrected else None
        return correction, (correction.token_weights if correction else None)

    @staticmethod
    def _embedded_vectors(raw: np.ndarray, correction: Correction | None, normalize: bool, dims: int | None = None):
        """Vectors in the served space; `dims` keeps the first ones (whitening's axes come by variance)."""
        vectors = project(raw, correction, normalize=normalize and dims is None)
        if dims is not None:
            if not 1 <= dims <= vectors.shape[1]:
                raise InvalidInput(f"dimensions must be within [1, {vectors.shape[1]}], got {dims}")
            vectors = l2_normalize(vectors[:, :dims]) if normalize else vectors[:, :dims]
        return vectors, (correction.id if correction else None)

    def truncated(self, texts: Sequence[str], what: str = "texts", *, truncate: bool = True) -> list[int]:
        """Indices of texts over the backbone's token limit; with `truncate` false, the first is a 422."""
        limit = getattr(self.backbone, "max_length", None)
        count = getattr(self.backbone, "token_counts", None)
        if not limit or count is None:
            return []
        # A token covers at least one byte, so a short text cannot be over; only long ones are counted.
        long = [i for i, t in enumerate(texts) if len(t.encode()) + 4 > limit]
        over = [(i, n) for i, n in zip(long, count([texts[i] for i in long]) if long else [], strict=True) if n > limit]
        if over and not truncate:
            i, n = over[0]
            raise InvalidInput(f'{what}[{i}]: {n} tokens, at most {limit}; send "truncate": true to cut it there')
        return [i for i, _ in over]

    def embed(self, texts: Sequence[str], *, corrected: bool = True, normalize: bool = True, truncate: bool = True):
        """Vectors, the id of the correction that made them (None when uncorrected), truncated indices."""
        cut = self.truncated(self._check_texts(texts), truncate=truncate)
        correction, weights = self._served(corrected)
        return *self._embedded_vectors(self.encode_raw(texts, weights), correction, normalize), cut

    async def embed_async(
        self,
        texts: Sequence[str],
        *,
        corrected: bool = True,
        normalize: bool = True,
        truncate: bool = True,
        dims: int | None = None,
    ):
        cut = self.truncated(self._check_texts(texts), truncate=truncate)
        correction, weights = self._served(corrected)
        raw = await self.encode_raw_async(texts, weights)
        return *self._embedded_vectors(raw, correction, normalize, dims), cut

    def token_count(self, texts: Sequence[str]) -> int:
        """Tokens the backbone sees for these texts (after truncation), for usage reports."""
        count = getattr(self.backbone, "token_counts", None)
        if count is None:
            return sum(len(t.split()) for t in texts)
        limit = getattr(self.backbone, "max_length", None) or 10**9
        return sum(min(n, limit) for n in count(texts))

    def _pair_texts(self, left: Sequence[str], right: Sequence[str]) -> list[str]:
        self._check_texts(left, "pairs (first texts)")  # the limit counts pairs, not texts
        self._check_texts(right, "pairs (second texts)")
        return list(left) + list(right)

    @staticmethod
    def _pair_scores(raw: np.ndarray | None, pooled: np.ndarray, correction: Correction | None, n: int):
        """Corrected cosines (of `pooled`: the raw vectors, or SIF's reweighted ones), raw cosines if `raw`."""
        corrected = project(pooled, correction)
        scores = np.sum(corrected[:n] * corrected[n:], axis=1)
        raw_unit = None if raw is None else l2_normalize(raw)
        raw_scores = None if raw_unit is None else np.sum(raw_unit[:n] * raw_unit[n:], axis=1)
        return scores, raw_scores, (correction.id if correction else None)

    async def similarity_async(self, left: Sequence[str], right: Sequence[str], *, with_raw: bool = True):
        """Corrected cosine of each (left[i], right[i]), the raw cosine (None unless `with_raw`), the correction id.

        A correction that pools its own way (SIF) needs a second encoding for the raw cosine: only if asked.
        """
        texts, (correction, weights) = self._pair_texts(left, right), self._served(True)
        pooled = await self.encode_raw_async(texts, weights)
        raw = pooled if weights is None else (await self.encode_raw_async(texts) if with_raw else None)
        return self._pair_scores(raw, pooled, correction, len(left))

    # --- documents and search -------------------------------------------------------------------------

    def add_documents(self, docs: Sequence[DocumentInput], *, truncate: bool = True) -> list[str]:
        """Encode, write to Redis in one transaction, then index; a store failure leaves nothing behind."""
        self.truncated(self._check_texts([d.text for d in docs], "documents"), "documents", truncate=truncate)
        records = document_records(self.encode_raw, docs)
        with self._writing() as space:
            change = self.store.put_documents(self.space_id, records)
            if self._live is not None:
                self._live.keeper.apply(space, records)
                space.local.add(change)
        return [r.id for r in records]

    def delete_document(self, doc_id: str) -> None:
        with self._writing() as space:
            existed, change = self.store.delete_documents(self.space_id, [doc_id])
            present = space.remove([doc_id])
            space.local.add(change)
        if not existed and not present:
            raise NotFound(f"no document with id {doc_id!r}")

    def get_document(self, doc_id: str) -> Document:
        (record,) = self.store.get_documents(self.space_id, [doc_id])
        if record is None:
            raise NotFound(f"no document with id {doc_id!r}")
        return Document.from_record(record)

    def search(
        self, query: str, k: int = 10, *, where: dict | None = None, score_threshold: float | None = None
    ) -> tuple[list[SearchHit], str | None]:
        """Top-k documents by corrected cosine, optionally only those whose metadata matches `where`."""
        if not 1 <= k <= self.settings.max_k:
            raise InvalidInput(f"k must be within [1, {self.settings.max_k}], got {k}")
        if not query.strip():
            raise InvalidInput("q must not be empty or whitespace only")
        if score_threshold is not None and not -1.0 <= score_threshold <= 1.0:
            raise InvalidInput(f"score_threshold is a cosine: within [-1, 1], got {score_threshold}")
        self._check_texts([query], "q")
        space = self._space  # one space for the whole query: its correction and its index agree
        try:
            allowed = space.fields.matching(where) if where is not None else None
        except FilterError as exc:
            raise InvalidInput(str(exc)) from None
        weights = space.correction.token_weights if space.correction else None
        (hits,) = space.index.search(project(self.encode_raw([query], weights), space.correction), k, allowed=allowed)
        if score_threshold is not None:
            hits = [(doc_id, score) for doc_id, score in hits if score >= score_threshold]
        docs = self.store.get_documents(self.space_id, [doc_id for doc_id, _ in hits]) if hits else []
        results = [
            SearchHit(doc.id, doc.text, json.loads(doc.metadata_json), score)
            for (_, score), doc in zip(hits, docs, strict=True)
            if doc is not None
        ]
        return results, space.correction_id

    # --- status ----------------------------------------------------------------------------------------

    def readiness(self) -> dict[str, bool]:
        """What /ready checks; the backbone, correction and index need none: they exist once the service does."""
        return {"store": self.store.ping()}

    def info(self) -> dict:
        space = self._space
        backbone = self.backbone
        return {
            "backbone": {
                "name": backbone.name,
                "fingerprint": backbone.fingerprint,
                "pooling": backbone.pooling,
                "dim": backbone.dim,
                "max_length": getattr(backbone, "max_length", None),
            },
            "correction": space.correction.artifact.metadata() if space.correction else None,
            "dim": self.dim,
            "engine": self.engine.stats(),
            "index": self._live.status() if self._live is not None else space.index.describe(),
            "limits": {
                "max_texts": self.settings.max_texts,
                "max_text_chars": self.settings.max_text_chars,
                "max_tokens": getattr(self.backbone, "max_length", None),
                "max_body_bytes": self.settings.max_body_bytes,
                "max_k": self.settings.max_k,
                "max_queue_texts": self.settings.max_queue_texts,
            },
        }
