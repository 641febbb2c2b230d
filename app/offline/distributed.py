"""Offline work on Ray: actors (one backbone each) encode the corpus; their statistics reduce into one fit.

Ray is an optional extra (`pip install .[ray]`); nothing else imports this module.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from app.core.config import Settings
from app.correction import CovarianceStats
from app.services.documents import DocumentInput

log = logging.getLogger(__name__)
BATCH = 256
SAMPLE_PER_BATCH = 32  # rows each batch contributes to the isotropy sample


@contextmanager
def ray_session(address: str | None, workers: int) -> Iterator[None]:
    """Connect to a cluster at `address`, or start a local Ray instance and stop it afterwards."""
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(
            address=address,
            num_cpus=None if address else workers,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    try:
        yield
    finally:
        if started:
            ray.shutdown()


class _StatsEncoder:
    """A Ray Data actor: builds the backbone once, turns each batch of texts into partial statistics."""

    def __init__(self, settings_json: str):
        from app.backbones import build_backbone

        self.backbone = build_backbone(Settings.model_validate_json(settings_json))

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = self.backbone.encode([str(t) for t in batch["text"]])
        stats = CovarianceStats(self.backbone.dim).update(vectors)
        rng = np.random.default_rng(int(batch["seed"][0]))
        sample = vectors[rng.choice(len(vectors), min(SAMPLE_PER_BATCH, len(vectors)), replace=False)]
        return {
            "count": np.array([stats.count]),
            "total": stats.total[None],
            "outer": stats.outer[None],
            "sample": np.full((1,), sample.tobytes(), dtype=object),
        }


def _settings_json(settings: Settings) -> str:
    return settings.model_dump_json(exclude={"api_keys"})  # actors need the backbone's settings, never secrets


def _on_actors(items: list[dict[str, Any]], actor: type, settings: Settings, workers: int) -> Any:
    """`items` through `workers` actors of class `actor`, a batch at a time, each on one CPU."""
    import ray.data

    return ray.data.from_items(items).map_batches(
        actor,
        fn_constructor_args=(_settings_json(settings),),
        batch_size=BATCH,
        concurrency=workers,
        num_cpus=1,
        batch_format="numpy",
    )


def encode_stats_on_ray(
    settings: Settings, texts: Sequence[str], *, workers: int
) -> tuple[CovarianceStats, np.ndarray]:
    """Statistics of the backbone's vectors of `texts`, encoded by `workers` actors; and a row sample."""

    items = [{"text": t, "seed": i // BATCH} for i, t in enumerate(texts)]
    ds = _on_actors(items, _StatsEncoder, settings, workers)
    stats: CovarianceStats | None = None
    samples: list[np.ndarray] = []
    for part in ds.iter_batches(batch_size=None, batch_format="numpy"):
        columns = (part["count"], part["total"], part["outer"], part["sample"])
        for count, total, outer, sample in zip(*columns, strict=True):
            dim = total.shape[0]
            piece = CovarianceStats(dim, int(count), np.asarray(total, dtype=np.float64), np.asarray(outer))
            stats = piece if stats is None else stats.merge(piece)
            samples.append(np.frombuffer(sample, dtype=np.float32).reshape(-1, dim))
    if stats is None:
        raise ValueError("no texts to encode")
    return stats, np.concatenate(samples)


class _DocumentWriter:
    """A Ray Data actor: encodes documents and writes them to the shared Redis with the API's ids."""

    def __init__(self, settings_json: str):
        from app.backbones import build_backbone
        from app.index.passages import splitter_for
        from app.store.redis_store import RedisStore

        settings = Settings.model_validate_json(settings_json)
        self.backbone = build_backbone(settings)
        self.split = splitter_for(self.backbone, settings)
        if settings.redis_url is None:
            raise ValueError("the Ray workers write to the Redis CE_REDIS_URL names: set it")
        self.store = RedisStore.from_url(
            settings.redis_url, prefix=settings.key_prefix, wait_replicas=settings.redis_wait_replicas
        )

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        from app.backbones.prompts import with_prompt
        from app.services.documents import document_records

        docs = [
            DocumentInput(text=str(t), id=str(i) if i else None, metadata=json.loads(m))
            for t, i, m in zip(batch["text"], batch["id"], batch["metadata"], strict=True)
        ]
        records = document_records(with_prompt(self.backbone.encode, self.backbone.prompts.document), docs, self.split)
        self.store.documents.put(self.backbone.fingerprint, records)
        return {"written": np.array([len(records)])}


def index_on_ray(settings: Settings, docs: Sequence[DocumentInput], *, workers: int) -> int:
    """Encode and store documents on `workers` actors; re-running writes the same ids (no duplicates)."""

    if not settings.redis_url:
        raise ValueError("index --engine ray writes to a shared Redis: set REDIS_URL")
    items = [{"text": d.text, "id": d.id or "", "metadata": json.dumps(d.metadata or {})} for d in docs]
    ds = _on_actors(items, _DocumentWriter, settings, workers)
    return int(sum(int(n) for part in ds.iter_batches(batch_size=None) for n in part["written"]))
