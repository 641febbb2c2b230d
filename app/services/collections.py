"""Collections: named corpora in one process, each with its own backbone, correction and index.

The default collection is what the unprefixed routes have always served; a named one keeps its documents
under its own space in Redis, and shares an encoder with every collection on the same backbone.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from app.core.config import Settings
from app.core.errors import ArtifactError, Conflict, InvalidInput, NotFound
from app.core.names import Pooling
from app.correction.artifact import ArtifactFormatError, CorrectionArtifact
from app.correction.pipeline import Correction
from app.correction.registry import check_compatible, load_version, publish, resolve_correction
from app.engine.encoder import BatchingEngine
from app.engine.pool import EnginePool
from app.index.faiss_index import VectorIndex
from app.index.snapshot import SnapshotFile
from app.services.collection_spec import (
    DEFAULT,
    NAME,
    CollectionFollower,
    CollectionSpec,
    check_name,
    search_settings,
    set_correction,
)
from app.services.spaces import SpaceServices, open_space
from app.store.collection_store import CollectionStore
from app.store.redis_store import RedisStore

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Collection:
    """An open collection: its settings, its encoder and the services on its space."""

    spec: CollectionSpec
    engine: BatchingEngine
    services: SpaceServices
    in_use: int = 0  # requests using it now: its backbone is not unloaded under them
    _count: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def backbone_key(self) -> tuple[str, str, str | None]:
        return self.spec.backbone_key

    @contextmanager
    def using(self) -> Iterator[SpaceServices]:
        """Its services, held for the length of a request."""
        with self._count:
            self.in_use += 1
        try:
            yield self.services
        finally:
            with self._count:
                self.in_use -= 1

    def describe(self) -> dict:
        space = self.services.served.space
        return {
            **asdict(self.spec),
            "correction": space.correction_id,  # what serves now (a published one may not be in `spec` yet)
            "fingerprint": self.engine.backbone.fingerprint,
            "dim": space.correction.dim if space.correction else self.engine.backbone.dim,
            "documents": self.services.documents.count(),
            "search_space": space.describe_search(),
            "index": self.services.served.status(),
            "open": True,
        }


class Collections:
    """The collections of one process: the default one, and named ones opened from Redis on first use."""

    def __init__(
        self, settings: Settings, store: RedisStore, engines: EnginePool, default: SpaceServices, *, search=True
    ):
        self.settings = settings
        self.search = search  # False in a writer (`index`, the CLI): collections open without an index
        self.store = store
        self.specs = CollectionStore(store)
        self.engines = engines
        correction = default.served.space.correction
        spec = CollectionSpec(DEFAULT, settings.backbone, settings.pooling, correction.id if correction else None,
                              settings.index_factory)  # fmt: skip
        self.default = Collection(spec, default.embedding.engine, default)
        self._open: dict[str, Collection] = {}
        self._lock = threading.Lock()

    def create(
        self,
        name: str,
        *,
        backbone=None,
        pooling=None,
        correction=None,
        index_factory=None,
        model_path=None,
        search: dict | None = None,
    ) -> Collection:
        """A new collection (409 if the name is taken); omitted settings take the service's own."""
        check_name(name)
        model_path = self._allowed_model(model_path, backbone or self.settings.backbone)
        backbone, pooling = backbone or self.settings.backbone, pooling or self.settings.pooling
        allowed = [self.settings.backbone, *self.settings.collection_backbones]
        if backbone not in allowed:
            served = ", ".join(allowed)
            raise InvalidInput(f"backbone {backbone!r} is not served here: {served} (CE_COLLECTION_BACKBONES)")
        if pooling not in set(Pooling):
            raise InvalidInput(f"pooling must be one of {', '.join(Pooling)}, got {pooling!r}")
        factory = index_factory or self.settings.index_factory
        if name == DEFAULT or self.specs.get(name) is not None:
            raise Conflict(f"collection {name!r} exists")
        engine = self.engines.get((backbone, pooling, model_path))
        try:
            VectorIndex(engine.backbone.dim, factory)
        except Exception as exc:  # faiss says why in many ways; all mean "not a factory string it can build"
            raise InvalidInput(f"index_factory {factory!r}: {exc}") from None
        artifact = self._correction(engine, correction or "auto")
        spec = CollectionSpec(name, backbone, pooling, artifact.id if artifact else None, factory,
                              datetime.now(UTC).isoformat(timespec="seconds"), uuid.uuid4().hex[:12],
                              model_path, engine.backbone.fingerprint, **search_settings(search))  # fmt: skip
        if not self.specs.create(name, spec.to_bytes()):
            raise Conflict(f"collection {name!r} exists")
        log.info("collection %s created: %s/%s, correction %s", name, backbone, pooling, spec.correction)
        return self.get(name)

    def _allowed_model(self, model_path: str | None, backbone: str) -> str | None:
        """A model folder CE_COLLECTION_MODELS lists, as it lists it (None: the service's own CE_MODEL_PATH)."""
        if model_path is None:
            return None
        allowed = {str(Path(p).resolve()): str(p) for p in self.settings.collection_models}
        folder = allowed.get(str(Path(model_path).resolve()))
        if folder is None:
            raise InvalidInput(f"model_path {model_path!r} is not served here (CE_COLLECTION_MODELS)")
        if backbone == "hashing":
            raise InvalidInput("the hashing backbone has no model folder")
        own = self.settings.model_path
        return None if own is not None and Path(own).resolve() == Path(folder).resolve() else folder

    def _correction(self, engine: BatchingEngine, choice: str) -> CorrectionArtifact | None:
        """`auto`: the backbone's current (or bundled) correction; `none`; or an artifact id kept in Redis."""
        if choice in ("auto", "none"):
            return resolve_correction(choice, self.store, engine.backbone, self.settings.models_dir)
        try:
            return load_version(self.store, engine.backbone, choice)
        except ArtifactError as exc:
            raise InvalidInput(f"correction {choice!r} cannot serve this collection: {exc}") from None

    def publish(self, name: str, artifact: CorrectionArtifact) -> Future:
        """Serve `artifact` in this collection (kept in Redis; the backbone's `current` does not move), its index
        rebuilt from the stored raw vectors and swapped whole; other collections are not touched."""
        collection = self.get(name)
        check_compatible(artifact, collection.engine.backbone)
        publish(self.store, artifact, make_current=False)
        set_correction(self.specs, name, artifact.id)
        return collection.services.served.rebuild(Correction(artifact), f"collection {name}: {artifact.id} published")

    def opened(self, name: str) -> Collection | None:
        """The collection if it is open here already (no Redis call: the request path's fast lane)."""
        return self.default if name == DEFAULT else self._open.get(name)

    def get(self, name: str) -> Collection:
        """The open collection; opened from Redis when another process created it (404 when none did)."""
        if name == DEFAULT:
            return self.default
        with self._lock:
            if name in self._open:
                return self._open[name]
            data = self.specs.get(name) if NAME.fullmatch(name) else None
            if data is None:
                raise NotFound(f"no collection named {name!r}")
            spec = CollectionSpec.from_bytes(data)
            engine = self.engines.get(spec.backbone_key)
            artifact = self._correction(engine, spec.correction) if spec.correction else None
            settings = self.settings.model_copy(update={"index_factory": spec.index_factory, **spec.search})
            follower = CollectionFollower(self.specs, name, self.store, engine.backbone)
            services = open_space(settings, engine, self.store, Correction(artifact) if artifact else None,
                                  spec.space_id, follower, search=self.search)  # fmt: skip
            self._open[name] = collection = Collection(spec, engine, services)
            self._unload_beyond_limit(keep=collection.backbone_key)
            return collection

    def _unload_beyond_limit(self, keep: tuple[str, str]) -> None:
        """Unload backbones beyond CE_MAX_BACKBONES, with the collections on them (they reopen on their next
        request, from their snapshot); never `keep` (just opened) nor one a request is using."""
        busy = {keep} | {c.backbone_key for c in self._open.values() if c.in_use}
        for key in self.engines.beyond_limit(busy):
            for name, collection in list(self._open.items()):
                if collection.backbone_key == key:
                    del self._open[name]
                    collection.services.close()
            self.engines.unload(key)
            log.info("unloaded backbone %s/%s (CE_MAX_BACKBONES=%d)", *key, self.settings.max_backbones)

    def open_collections(self) -> list[Collection]:
        """The default and every named collection open in this process (what /metrics reports, without opening)."""
        return [self.default, *sorted(self._open.values(), key=lambda c: c.spec.name)]

    def names(self) -> list[str]:
        """The named collections, as Redis lists them (another process may have created some)."""
        return sorted(self.specs.all())

    def describe_all(self) -> list[dict]:
        """Every collection; one not open in this process is described from Redis, without loading its backbone."""
        described = [self.default.describe()]
        for name, data in sorted(self.specs.all().items()):
            opened = self._open.get(name)
            if opened is not None:
                described.append(opened.describe())
                continue
            spec = CollectionSpec.from_bytes(data)
            described.append({**asdict(spec), "open": False, "documents": self.store.count_documents(spec.space_id)})
        return described

    def delete(self, name: str) -> None:
        """Remove a collection's documents, vectors, change log and snapshot; nothing of any other one."""
        if name == DEFAULT:
            raise Conflict("the default collection cannot be deleted")
        with self._lock:
            collection = self._open.pop(name, None)
            data = self.specs.take(name)
        if data is None:
            raise NotFound(f"no collection named {name!r}")
        spec = CollectionSpec.from_bytes(data)
        space_id = spec.space_id
        if collection is not None:
            collection.services.close()
        self.store.drop_space(space_id)
        self._drop_own_corrections(spec)
        SnapshotFile(self.store, space_id, self.settings.data_dir / "index").delete()
        log.info("collection %s deleted", name)

    def _drop_own_corrections(self, spec: CollectionSpec) -> None:
        """Corrections fitted on the collection's documents go with it, unless another collection serves one."""
        kept = {CollectionSpec.from_bytes(d).correction for d in self.specs.all().values()}
        for artifact_id in self.store.artifact_versions(spec.fingerprint):
            data = self.store.get_artifact(spec.fingerprint, artifact_id)
            try:
                source = CorrectionArtifact.from_bytes(data or b"").corpus.source
            except ArtifactFormatError:
                continue
            if source == spec.space_id and artifact_id not in kept:
                self.store.delete_artifact(spec.fingerprint, artifact_id)

    def close(self) -> None:
        with self._lock:
            opened, self._open = list(self._open.values()), {}
        for collection in opened:
            collection.services.close()
