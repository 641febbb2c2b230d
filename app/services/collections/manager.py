"""Collections: named corpora in one process, each with its own backbone, correction and index. The default one is
what the unprefixed routes serve; a named one keeps its documents under its own key and shares an encoder."""

from __future__ import annotations

import logging
import threading
import uuid
from concurrent.futures import Future
from contextlib import suppress
from dataclasses import asdict, replace
from datetime import UTC, datetime
from typing import Any

from app.core.config import Settings
from app.core.errors import Conflict, InvalidInput, NotFound, NotReady, ServiceError
from app.core.search_settings import SearchSettings
from app.correction.artifact import CorrectionArtifact
from app.correction.pipeline import Correction
from app.correction.publication import PublishedFollower, check_compatible, publish
from app.engine.pool import EnginePool, Key
from app.index.dense_lists import DenseSource
from app.index.live import live
from app.services.collections import checks
from app.services.collections.checks import check_encoder, complete, correction_for, failed_to_load, search_settings
from app.services.collections.collection import Collection
from app.services.collections.legacy import say_where_legacy_documents_are
from app.services.collections.opening import Opening, Openings
from app.services.collections.spec import (
    DEFAULT,
    FAILED,
    LOADING,
    NAME,
    READY,
    CollectionFollower,
    CollectionSpec,
    erase,
    set_correction,
)
from app.services.collections.wiring import open_collection_services, open_shards
from app.store.redis_store import RedisStore

log = logging.getLogger(__name__)
OPEN_WAIT = 1.0  # seconds a request waits for a collection to open before a 503 with Retry-After


class Collections:
    """The collections of one process: the default one, and named ones opened from Redis on first use.

    A named one opens on a thread of its own (`Openings`): its backbone may take a minute to load, and no request
    waits for that; one created before its backbone loaded is `loading` in Redis until some process loads it.
    """

    def __init__(
        self,
        settings: Settings,
        store: RedisStore,
        engines: EnginePool,
        correction: Correction | None,
        *,
        search: bool = True,
        dense: DenseSource | None = None,
        redis_url: str | None = None,
    ):
        self.settings = settings
        self.redis_url = redis_url  # as the shards of a collection kept in parts reach the store
        self.search = search  # False in a writer (`index`, the CLI): collections open without an index
        self.store = store
        self.specs = store.collections
        self.engines = engines
        self.default = self._open_default(correction, dense)
        self._open: dict[str, Collection] = {}
        self._lock = threading.Lock()
        self.openings: Openings[Collection] = Openings(self._open_one)

    def create(
        self,
        name: str,
        *,
        backbone: str | None = None,
        pooling: str | None = None,
        correction: str | None = None,
        index_factory: str | None = None,
        model_path: str | None = None,
        shards: int = 0,
        search: dict[str, Any] | None = None,
        wait: float | None = None,
    ) -> dict[str, Any]:
        """A new collection (409 if the name is taken), described; omitted settings take the service's own. One
        whose backbone is loaded is checked and ready at once; another is `loading` until its backbone loads
        (within `wait` seconds, or however long with None), and then `ready` or `failed`."""
        backbone, pooling, model_path = check_encoder(self.settings, name, backbone, pooling, model_path)
        checks.check_factory_form(index_factory)
        if name == DEFAULT or self.specs.get(name) is not None:
            raise Conflict(f"collection {name!r} exists")
        spec = CollectionSpec(
            name,
            backbone,
            pooling,
            None,
            index_factory or self.settings.index_factory,
            datetime.now(UTC).isoformat(timespec="seconds"),
            uuid.uuid4().hex[:12],
            model_path,
            **search_settings(search),
            state=LOADING,
            requested_correction=correction or "auto",
            shards=checks.check_shards(shards, self.settings.max_collection_shards),
        )
        engine = self.engines.loaded_engine(spec.backbone_key)
        if engine is not None:
            spec = complete(spec, engine, self.store, self.settings.models_dir)  # a 422 now, with nothing stored
        if not self.specs.create(name, spec.to_bytes()):
            raise Conflict(f"collection {name!r} exists")
        self.openings.forget(name)
        log.info("collection %s created (%s): %s/%s", name, spec.state, backbone, pooling)
        if (spec.loading or spec.shards) and wait == 0:  # answered at once, its backbone (or Ray) starting on a thread
            self.openings.start(name)
            return self._described(spec)
        with suppress(NotReady):  # a ready one opens in moments (it is empty); a loading one is described as such
            self.openings.wait(name, None if spec.state == READY and not spec.shards else wait)
        return self.describe(name, wait=0)

    def publish(self, name: str, artifact: CorrectionArtifact) -> Future[Any]:
        """Serve `artifact` in this collection (kept in Redis; the backbone's `current` does not move), its index
        rebuilt from the stored raw vectors and swapped whole; other collections are not touched."""
        collection = self.get(name)
        if collection.spec.shards:
            raise Conflict(f"collection {name!r} is kept in parts: it serves the correction it was created with")
        check_compatible(artifact, collection.engine.backbone)
        publish(self.store, artifact, make_current=False)
        set_correction(self.specs, name, artifact.id)
        served = live(collection.services.served)
        return served.rebuild(Correction(artifact), f"collection {name}: {artifact.id} published")

    def opened(self, name: str) -> Collection | None:
        """The collection if it is open here already (no Redis call: the request path's fast lane)."""
        return self.default if name == DEFAULT else self._open.get(name)

    def get(self, name: str, *, wait: float | None = None) -> Collection:
        """The open collection, opened from Redis when another process created it (404 when none did); within
        `wait` seconds (None: however long its backbone takes to load), else 503 with Retry-After."""
        return self.opened(name) or self.openings.wait(name, wait)

    def _open_default(self, correction: Correction | None, dense: DenseSource | None) -> Collection:
        """The service's own collection, wired as every other: its documents under its backbone's fingerprint, as
        they always were, its correction the one CE_CORRECTION names (followed as published), its settings the
        service's; `dense` is its shards' list under CE_SHARDS."""
        engine, settings = self.engines.default, self.settings
        published = PublishedFollower(settings.correction, self.store, engine.backbone)
        key = engine.backbone.fingerprint
        services = open_collection_services(
            settings, engine, self.store, correction, key, published, search=self.search, dense=dense
        )
        correction_id, pooling = correction.id if correction else None, engine.backbone.pooling
        spec = CollectionSpec(DEFAULT, settings.backbone, pooling, correction_id, settings.index_factory)
        say_where_legacy_documents_are(self.store, key, getattr(engine.backbone, "legacy_fingerprint", None))
        return Collection(spec, engine, services)

    def _open_one(self, opening: Opening[Collection]) -> Collection:
        """Open a collection on the opening's thread: its backbone loaded, its spec completed if it was loading."""
        name = opening.name
        spec = self._spec(name)
        if spec.failed:
            raise failed_to_load(spec)
        opening.step = f"loading backbone {spec.backbone}/{spec.pooling}"
        try:
            engine = self.engines.get(spec.backbone_key)
        except Exception as exc:
            if not spec.loading:
                raise
            spec = self._conclude(replace(spec, state=FAILED, error=f"its backbone did not load: {exc}"))
        if spec.loading:
            opening.step = "checking its settings"
            try:
                spec = self._conclude(complete(spec, engine, self.store, self.settings.models_dir))
            except InvalidInput as exc:
                spec = self._conclude(replace(spec, state=FAILED, error=exc.message))
        if spec.failed:
            raise failed_to_load(spec)
        if (unservable := checks.unservable_factory(spec.index_factory)) is not None:  # stored by an older release
            raise failed_to_load(replace(spec, error=unservable))  # refused, never handed to FAISS
        opening.step = "opening its index"
        artifact = correction_for(self.store, engine, spec.correction, self.settings.models_dir)
        search = SearchSettings(**{**self.settings.search.model_dump(exclude_none=True), **spec.search})
        settings = self.settings.model_copy(update={"index_factory": spec.index_factory, "search": search})
        follower = CollectionFollower(self.specs, name, self.store, engine.backbone)
        correction = Correction(artifact) if artifact else None
        if spec.shards and self.search:
            opening.step = f"starting its {spec.shards} shards on Ray"
        shards = open_shards(settings, self.store, self.redis_url, spec, engine, correction) if self.search else None
        services = open_collection_services(
            settings, engine, self.store, correction, spec.collection_key, follower, search=self.search, shards=shards
        )
        collection = Collection(spec, engine, services)
        with self._lock:
            held = self.specs.get(name)
            if held is None or CollectionSpec.from_bytes(held).uid != spec.uid:
                services.close()
                raise NotFound(f"collection {name!r} was deleted while it opened")
            self._open[name] = collection
            self._unload_beyond_limit(keep=collection.backbone_key)
        return collection

    def _spec(self, name: str) -> CollectionSpec:
        data = self.specs.get(name) if NAME.fullmatch(name) else None
        if data is None:
            raise NotFound(f"no collection named {name!r}")
        return CollectionSpec.from_bytes(data)

    def _conclude(self, spec: CollectionSpec) -> CollectionSpec:
        """Store a loading collection's outcome, unless another process stored one first: what Redis holds then."""

        def change(data: bytes) -> bytes:
            held = CollectionSpec.from_bytes(data)
            return spec.to_bytes() if held.uid == spec.uid and held.loading else data

        if not self.specs.update(spec.name, change):
            raise NotFound(f"no collection named {spec.name!r}")
        concluded = self._spec(spec.name)
        if concluded.uid != spec.uid:
            raise NotFound(f"collection {spec.name!r} was deleted while it loaded")
        log.info("collection %s: %s%s", spec.name, concluded.state, f" ({concluded.error})" if concluded.error else "")
        return concluded

    def _unload_beyond_limit(self, keep: Key) -> None:
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

    def describe(self, name: str, *, wait: float | None = OPEN_WAIT) -> dict[str, Any]:
        """One collection as it serves here, opened for up to `wait` seconds; else as Redis holds it, with its
        state and, while it opens here, what it is doing (404 if there is none)."""
        if self.opened(name) is None and not self._spec(name).failed:
            with suppress(ServiceError):  # described below as it stands, the reason included
                self.openings.wait(name, wait)
        opened = self.opened(name)
        return opened.describe() if opened is not None else self._described(self._spec(name))

    def describe_all(self) -> list[dict[str, Any]]:
        """Every collection; one not open in this process is described from Redis, without loading its backbone."""
        described = [self.default.describe()]
        for name, data in sorted(self.specs.all().items()):
            opened = self._open.get(name)
            spec = CollectionSpec.from_bytes(data)
            described.append(opened.describe() if opened is not None else self._described(spec))
        return described

    def _described(self, spec: CollectionSpec) -> dict[str, Any]:
        """As Redis holds it; `loading` while it opens here (its backbone; Ray and the shards of one kept in parts)."""
        opening = self.openings.current(spec.name)
        return {
            **asdict(spec),
            **({"state": LOADING} if opening is not None and spec.state == READY else {}),
            "open": False,
            "documents": self.store.documents.count(spec.collection_key),
            "opening": opening.progress() if opening is not None else None,
        }

    def delete(self, name: str) -> None:
        """Remove a collection's documents, vectors, change log and snapshot; nothing of any other one."""
        if name == DEFAULT:
            raise Conflict("the default collection cannot be deleted")
        with self._lock:
            collection = self._open.pop(name, None)
            data = self.specs.take(name)
        self.openings.forget(name)
        if data is None:
            raise NotFound(f"no collection named {name!r}")
        spec = CollectionSpec.from_bytes(data)
        index_dir = self.settings.data_dir / "index"
        if collection is not None:  # a kept-in-parts one's shards write until they stop: erased again then
            collection.services.close(deleted=True, then=lambda: erase(self.store, spec, index_dir))
        erase(self.store, spec, index_dir)
        log.info("collection %s deleted", name)

    def close(self) -> None:
        with self._lock:
            opened, self._open = list(self._open.values()), {}
        for collection in [*opened, self.default]:
            collection.services.close()
