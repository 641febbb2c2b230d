"""The encoders of one process: one per (backbone, pooling), shared by every collection that uses it."""

from __future__ import annotations

import threading

from app.backbones.registry import build_backbone
from app.core.config import Settings
from app.engine.encoder import BatchingEngine


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
        self._engines = {(settings.backbone, settings.pooling): default}
        self._lock = threading.Lock()

    def get(self, backbone: str, pooling: str) -> BatchingEngine:
        with self._lock:  # one load at a time: two collections asking for a new backbone load it once
            key = (backbone, pooling)
            if key not in self._engines:
                self._engines[key] = engine_for(self._settings.model_copy(update={"backbone": backbone,
                                                                                 "pooling": pooling}))  # fmt: skip
            return self._engines[key]

    def loaded(self) -> list[tuple[str, str]]:
        return list(self._engines)

    def close(self) -> None:
        for engine in self._engines.values():
            engine.close()
