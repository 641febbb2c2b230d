"""The encoders of one process: one per (backbone, pooling, model folder), shared by every collection using it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from app.backbones.registry import build_backbone
from app.core.config import Settings
from app.engine.encoder import BatchingEngine

Key = tuple[str, str, str | None]  # backbone, pooling, model folder (None: CE_MODEL_PATH, the service's own)


def engine_for(settings: Settings, backbone=None) -> BatchingEngine:
    """An encoder for the settings' backbone and pooling (or for a backbone already built)."""
    return BatchingEngine(
        backbone or (lambda: build_backbone(settings)),
        max_queue_texts=settings.max_queue_texts,
        round_texts=settings.batch_size,
        request_timeout=settings.request_timeout,
    )


class EnginePool:
    """Loads a backbone on first use and keeps it: collections on one backbone share its weights and rounds."""

    def __init__(self, settings: Settings, default: BatchingEngine):
        self._settings = settings
        self.default_key: Key = (settings.backbone, settings.pooling, None)
        self._engines = {self.default_key: default}
        self._used = {self.default_key: time.monotonic()}
        self._lock = threading.Lock()

    def get(self, key: Key) -> BatchingEngine:
        """The encoder for (backbone, pooling, model folder or None: CE_MODEL_PATH's), loaded on first use."""
        with self._lock:  # one load at a time: two collections asking for a new backbone load it once
            if key not in self._engines:
                backbone, pooling, folder = key
                update = {"backbone": backbone, "pooling": pooling, **({"model_path": Path(folder)} if folder else {})}
                self._engines[key] = engine_for(self._settings.model_copy(update=update))
            self._used[key] = time.monotonic()
            return self._engines[key]

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
        for engine in self._engines.values():
            engine.close()
