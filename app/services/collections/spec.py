"""A collection's settings as Redis keeps them, the name rule, and the follower of its correction."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from app.backbones.base import Backbone
from app.core.errors import ArtifactError, NotFound
from app.core.search_settings import SearchSettings
from app.correction.artifact import ArtifactFormatError, CorrectionArtifact
from app.correction.pipeline import Correction
from app.correction.publication import load_version
from app.index.snapshot import SnapshotFile
from app.store.collection_store import CollectionStore
from app.store.keys import partitioned, parts_of
from app.store.redis_store import RedisStore

log = logging.getLogger(__name__)
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
DEFAULT = "default"
LOADING, READY, FAILED = "loading", "ready", "failed"


@dataclass(frozen=True)
class CollectionSpec:
    """What a collection is, as Redis keeps it: fixed at creation but for the correction it serves."""

    name: str
    backbone: str
    pooling: str
    correction: str | None  # the artifact id its vectors are corrected by; None: raw vectors
    index_factory: str
    created_at: str = ""
    uid: str = ""  # new at each creation: a deleted collection's late writes never reach one made again
    model_path: str | None = None  # a local Hugging Face folder CE_COLLECTION_MODELS allows; None: CE_MODEL_PATH
    fingerprint: str = ""  # of its backbone: where the corrections fitted on it are kept
    search_mode: str | None = None  # how /search ranks by default; None: the correction's choice, else the rule
    fusion: str | None = None
    lexical_weight: float | None = None
    feedback_docs: int | None = None
    feedback_weight: float | None = None
    lexical_language: str | None = None  # the lexical index's stemmer and stop words
    lexical_stopwords: bool | None = None
    index_probe: int | None = None  # nprobe / efSearch over the calibrated one
    index_rerank: int | None = None  # candidates a compressed index re-scores exactly
    state: str = "ready"  # loading: created before its backbone loaded, so `correction` and `fingerprint` wait
    requested_correction: str | None = None  # while loading: auto, none or an artifact id, resolved once loaded
    error: str | None = None  # failed: why its backbone or settings could not serve
    shards: int = 0  # kept in this many parts, each searched by a shard of its own on Ray (0: whole, here)

    @property
    def loading(self) -> bool:
        return self.state == LOADING

    @property
    def failed(self) -> bool:
        return self.state == FAILED

    @property
    def search(self) -> dict[str, Any]:
        """The search settings it was created with (what its index is opened with); the service's own (CE_SEARCH)
        hold for those it leaves unset."""
        return {k: getattr(self, k) for k in SEARCH_SETTINGS if getattr(self, k) is not None}

    @property
    def backbone_key(self) -> tuple[str, str, str | None]:
        return self.backbone, self.pooling, self.model_path

    @property
    def collection_key(self) -> str:
        return partitioned(f"collection:{self.name}:{self.uid}", self.shards)

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self)).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> CollectionSpec:
        return cls(**json.loads(data))


def set_correction(specs: CollectionStore, name: str, artifact_id: str) -> None:
    """Point a collection at another correction in Redis; every process serving it follows (404 if deleted)."""

    def change(data: bytes) -> bytes:
        return replace(CollectionSpec.from_bytes(data), correction=artifact_id).to_bytes()

    if not specs.update(name, change):
        raise NotFound(f"no collection named {name!r}")


def erase(store: RedisStore, spec: CollectionSpec, index_dir: Path) -> None:
    """A deleted collection's documents, vectors, change logs, snapshots (each part's) and own corrections."""
    store.drop_collection(spec.collection_key)
    drop_own_corrections(store, spec)
    for key in {spec.collection_key, *parts_of(spec.collection_key)}:  # a kept-in-parts one's shards snapshot each
        SnapshotFile(store, key, index_dir).delete()


def drop_own_corrections(store: RedisStore, spec: CollectionSpec) -> None:
    """Corrections fitted on a deleted collection's documents go with it, unless another collection serves one."""
    kept = {CollectionSpec.from_bytes(d).correction for d in store.collections.all().values()}
    for artifact_id in store.artifacts.versions(spec.fingerprint):
        data = store.artifacts.get(spec.fingerprint, artifact_id)
        try:
            source = CorrectionArtifact.from_bytes(data or b"").corpus.source
        except ArtifactFormatError:
            continue
        if source == spec.collection_key and artifact_id not in kept:
            store.artifacts.delete(spec.fingerprint, artifact_id)


class CollectionFollower:
    """What a collection's index follows: the correction its settings in Redis name, once it changes."""

    def __init__(self, specs: CollectionStore, name: str, store: RedisStore, backbone: Backbone):
        self.specs, self.name, self.store, self.backbone = specs, name, store, backbone
        self._refused: str | None = None

    def __call__(self, serving_id: str | None) -> Correction | None:
        data = self.specs.get(self.name)
        wanted = CollectionSpec.from_bytes(data).correction if data is not None else None
        if wanted is None or wanted in (serving_id, self._refused):
            return None
        try:
            return Correction(load_version(self.store, self.backbone, wanted))
        except ArtifactError as exc:
            log.error("collection %s: refusing %s; %s keeps serving: %s", self.name, wanted, serving_id, exc)
            self._refused = wanted
            return None


SEARCH_SETTINGS = tuple(SearchSettings.model_fields)
