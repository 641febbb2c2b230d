"""The encoders of one process: one per (backbone, pooling, model folder), shared by every collection using it."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from app.backbones.base import Backbone
from app.backbones.catalog import build_backbone
from app.core.config import Settings
from app.engine.encoder import BatchingEngine

Key = tuple[str, str, str | None]  # backbone, pooling, model folder (None: CE_MODEL_PATH, the service's own)


def engine_for(settings: Settings, backbone: Backbone | None = None) -> BatchingEngine:
    """An encoder for the settings' backbone and pooling (or for a backbone already built)."""
    return BatchingEngine(
        backbone or (lambda: build_backbone(settings)),
        max_queue_texts=settings.max_queue_texts,
        round_texts=settings.batch_size,
        round_tokens=settings.round_tokens,
        request_timeout=settings.request_timeout,
    )


class EnginePool:
    """Loads a backbone on first use and keeps it: collections on one backbone share its weights and rounds."""

    def __init__(self, settings: Settings, default: BatchingEngine):
        self._settings = settings
        self.default = default  # the service's own backbone: never unloaded
        self.default_key: Key = (settings.backbone, default.backbone.pooling, None)  # the pooling in force
        self._engines: dict[Key, BatchingEngine] = {self.default_key: default}
        self._used: dict[Key, float] = {self.default_key: time.monotonic()}
        self._loading: dict[Key, Future[BatchingEngine]] = {}
        self._lock = threading.Lock()  # the tables; never held during a load
        self._one_load = threading.Lock()  # loads run one at a time: two exports at once would share two cores

    def get(self, key: Key) -> BatchingEngine:
        """The encoder for (backbone, pooling, model folder or None: CE_MODEL_PATH's), loaded on first use; a
        caller asking for one another caller is loading waits for that load, one asking for a loaded one never."""
        with self._lock:
            if key in self._engines:
                self._used[key] = time.monotonic()
                return self._engines[key]
            waited = self._loading.get(key)
            if waited is None:
                self._loading[key] = future = Future[BatchingEngine]()
        if waited is not None:
            return waited.result()
        try:
            with self._one_load:
                engine = engine_for(self._settings.model_copy(update=self._update(key)))
        except BaseException as exc:
            with self._lock:
                del self._loading[key]
            future.set_exception(exc)
            raise
        with self._lock:
            del self._loading[key]
            self._engines[key], self._used[key] = engine, time.monotonic()
        future.set_result(engine)
        return engine

    def loaded_engine(self, key: Key) -> BatchingEngine | None:
        """The encoder if it is loaded now (never waits)."""
        with self._lock:
            return self._engines.get(key)

    @staticmethod
    def _update(key: Key) -> dict[str, Any]:
        backbone, pooling, folder = key
        return {"backbone": backbone, "pooling": pooling, **({"model_path": Path(folder)} if folder else {})}

    def loaded(self) -> list[Key]:
        return list(self._engines)

    def beyond_limit(self, busy: set[Key]) -> list[Key]:
        """What to unload to get back to CE_MAX_BACKBONES: the least recently used first, never the default one
        nor one in `busy` (a request is using it)."""
        with self._lock:
            excess = len(self._engines) - self._settings.max_backbones
            if not self._settings.max_backbones or excess <= 0:
                return []
            idle = [k for k in self._engines if k != self.default_key and k not in busy]
            return sorted(idle, key=self._used.__getitem__)[:excess]

    def unload(self, key: Key) -> None:
        """Close an encoder (it finishes what is queued first) and let go of its weights."""
        with self._lock:
            engine = self._engines.pop(key, None)
            self._used.pop(key, None)
        if engine is not None:
            engine.close()

    def close(self) -> None:
        """Close every encoder and let go of it: a server's start-up freezes this pool out of the collector
        (`gc.freeze`), so an encoder it kept a reference to would never be freed."""
        with self._lock:
            engines, self._engines = list(self._engines.values()), {}
            self._used.clear()
        for engine in engines:
            engine.close()
