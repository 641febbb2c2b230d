"""An open collection: its settings, its encoder and the services on its index, held while requests use it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from app.backbones.local import model_description
from app.engine.encoder import BatchingEngine
from app.services.collections.spec import CollectionSpec
from app.services.collections.wiring import CollectionServices


@dataclass(eq=False)
class Collection:
    """An open collection: its settings, its encoder and the services on its index."""

    spec: CollectionSpec
    engine: BatchingEngine
    services: CollectionServices
    in_use: int = 0  # requests using it now: its backbone is not unloaded under them
    _count: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def backbone_key(self) -> tuple[str, str, str | None]:
        return self.spec.backbone_key

    @contextmanager
    def using(self) -> Iterator[CollectionServices]:
        """Its services, held for the length of a request."""
        with self._count:
            self.in_use += 1
        try:
            yield self.services
        finally:
            with self._count:
                self.in_use -= 1

    def _shards(self) -> dict[str, Any]:
        """A collection kept in parts: each shard's status (None for one that does not answer now)."""
        return {"shards": self.services.shards.status()} if self.services.shards is not None else {}

    def describe(self) -> dict[str, Any]:
        index = self.services.served.current
        return {
            **asdict(self.spec),
            "correction": index.correction_id,  # what serves now (a published one may not be in `spec` yet)
            "fingerprint": self.engine.backbone.fingerprint,
            "model": model_description(self.engine.backbone),
            "dim": index.correction.dim if index.correction else self.engine.backbone.dim,
            "documents": self.services.documents.count(),
            "search_space": index.describe_search(),
            "index": {**self.services.served.status(), **self._shards()},
            "open": True,
        }
