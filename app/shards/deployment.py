"""A collection's shards as Ray Serve deployments: each opens its part of the index from its snapshot and Redis,
follows the change log like a replica, and is restarted by Serve when its process dies.

Ray Serve is an optional extra (`pip install .[ray]`); the service imports this module only when sharded.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from app.core.config import Settings
from app.core.process_memory import status_bytes
from app.correction.artifact import CorrectionArtifact
from app.correction.pipeline import Correction
from app.index import global_bm25
from app.index.builder import IndexBuilder
from app.index.calibration import SearchDepth
from app.index.dense_lists import LocalDense, Scope
from app.index.global_bm25 import LexicalStatistics
from app.index.lexical import Analyzer, LexicalIndex
from app.index.live import LiveIndex
from app.index.metadata_filter import Filter
from app.index.shards import Shard
from app.store.keys import parts_of
from app.store.redis_store import RedisStore

log = logging.getLogger(__name__)
HEALTH_CHECK_SECONDS = 2.0  # how soon Serve notices a shard that no longer answers


@dataclass(frozen=True)
class ShardConfig:
    """What a shard process needs to open its part of a collection: plain values, sent to it by Ray."""

    redis_url: str
    key_prefix: str
    collection_key: str
    raw_dim: int
    fingerprint: str  # the backbone's: where the correction's artifact is kept
    correction_id: str | None
    factory: str
    recall: float
    probe: int | None
    rerank: int | None
    snapshot_dir: str | None
    follow_interval: float
    snapshot_interval: float
    replica_timeout: float
    follow_published: bool = False  # `CE_CORRECTION=auto`: serve the correction Redis marks current, as servers do
    cpus: float = 0.0  # logical CPUs a shard reserves on its node (one on a Ray cluster: RAY_ADDRESS)
    lexical_language: str = "english"  # a partitioned collection's shards hold its lexical index too
    lexical_stopwords: bool = True
    lexical_dir: str | None = None  # where their working folders go

    @property
    def partitioned(self) -> bool:
        """Kept in parts (`shards: N`): shard n holds part n, follows its change log, and searches it both ways."""
        return parts_of(self.collection_key) != [self.collection_key]

    @classmethod
    def of(
        cls,
        settings: Settings,
        collection_key: str,
        raw_dim: int,
        fingerprint: str,
        correction_id: str | None,
        redis_url: str,
    ) -> ShardConfig:
        return cls(
            redis_url,
            settings.key_prefix,
            collection_key,
            raw_dim,
            fingerprint,
            correction_id,
            settings.index_factory,
            settings.index_recall,
            settings.search.index_probe,
            settings.search.index_rerank,
            str(settings.data_dir / "index"),
            settings.follow_interval,
            settings.snapshot_interval,
            settings.replica_timeout,
            settings.correction == "auto",
            settings.shard_cpus,
            Analyzer.of(settings.search).language,  # the defaults of unset ones: Analyzer's, written once
            Analyzer.of(settings.search).stopwords,
            str(settings.data_dir / "lexical"),
        )


class ShardBehind(RuntimeError):
    """The query was encoded for another correction than this shard serves (one of them has not caught up)."""


class IndexShard:
    """One shard: its LiveIndex over the documents it holds, searched by vector (the caller encodes the query)."""

    def __init__(self, config: ShardConfig, number: int, count: int):
        self.shard, self.config = Shard(number, count), config
        self.store = RedisStore.from_url(config.redis_url, prefix=config.key_prefix)
        correction = self._correction(config.correction_id) if config.correction_id else None
        part = parts_of(config.collection_key)[number] if config.partitioned else None
        builder = IndexBuilder(
            self.store,
            part or config.collection_key,
            config.raw_dim,
            factory=config.factory,
            recall=config.recall,
            depth=SearchDepth(config.probe, config.rerank),
            shard=None if part else self.shard,  # a part holds its own documents alone
            analyzer=Analyzer(config.lexical_language, config.lexical_stopwords) if part else None,
            work_dir=Path(config.lexical_dir) if config.lexical_dir else None,
            sentinel=part is not None,
        )
        snapshots = Path(config.snapshot_dir) if config.snapshot_dir else None
        self.served = LiveIndex(
            builder,
            correction,
            published=self._published,
            snapshot_dir=snapshots,
            follow_interval=config.follow_interval,
            snapshot_interval=config.snapshot_interval,
            replica_timeout=config.replica_timeout,
        )
        log.info("%s of %s open: %d documents", self.shard.name, config.collection_key, self.served.current.documents)

    def _correction(self, artifact_id: str) -> Correction:
        data = self.store.artifacts.get(self.config.fingerprint, artifact_id)
        if data is None:
            raise RuntimeError(f"correction {artifact_id} is not in Redis")
        return Correction(CorrectionArtifact.from_bytes(data))

    def _published(self, serving_id: str | None) -> Correction | None:
        """The correction Redis marks current, when it is not the one served (the server checked it on publish)."""
        current = self.store.artifacts.current_id(self.config.fingerprint) if self.config.follow_published else None
        return self._correction(current) if current and current != serving_id else None

    def search(
        self, vector: np.ndarray, depth: int, correction_id: str | None = None, where: Filter | None = None
    ) -> tuple[list[tuple[str, float]], dict[str, int], int]:
        """This shard's top `depth` documents by their best passage (matching `where`), which passage that was, and
        how many documents it holds; ShardBehind if the query is in another correction's space than this shard's.
        Every write logged before it asked is in the answer (read-your-writes)."""
        index = self.served.caught_up()
        if correction_id != index.correction_id:
            raise ShardBehind(f"{self.shard.name} serves {index.correction_id}, the query is for {correction_id}")
        allowed = index.fields.matching(where) if where is not None else None
        found = LocalDense(self.served.builder.vectors).search(index, vector, depth, Scope(allowed))
        return found.hits, found.best, index.documents

    def neighbours(self, vectors: np.ndarray, depth: int, correction_id: str | None) -> list[list[tuple[str, float]]]:
        """Each vector's top `depth` passages here (keys and cosines): what the collection's scale of cosines is
        measured on (index/dense_scale)."""
        index = self.served.current
        if correction_id != index.correction_id:
            raise ShardBehind(f"{self.shard.name} serves {index.correction_id}, the sample is for {correction_id}")
        return index.dense.search(vectors, depth)

    def lexical_statistics(self, text: str) -> dict[str, Any]:
        """This shard's documents, tokens and the query's document frequencies (see index/global_bm25), every write
        logged before it asked applied: the lexical search asked next reads the same index."""
        self.served.caught_up()
        return global_bm25.statistics(self._lexical(), text).to_dict()

    def search_lexical(
        self, text: str, depth: int, where: Filter | None, total: dict[str, Any]
    ) -> tuple[list[tuple[str, float]], dict[str, float]]:
        """This shard's top `depth` by BM25 under the collection's statistics `total`, each hit's share of idf."""
        index = self.served.current
        allowed = index.fields.matching(where) if where is not None else None
        return global_bm25.search(self._lexical(), text, depth, LexicalStatistics(**total), allowed)

    def _lexical(self) -> LexicalIndex:
        lexical = self.served.current.lexical
        if lexical is None:
            raise RuntimeError(f"{self.shard.name} holds no lexical index: its collection is not kept in parts")
        return lexical

    def status(self) -> dict[str, Any]:
        """Which shard, where (process and Ray node), and what it holds."""
        import ray

        return {
            "shard": self.shard.number,
            "pid": os.getpid(),
            "node": ray.get_runtime_context().get_node_id(),
            "rss_mb": round((status_bytes("VmRSS") or 0) / 1e6, 1),
            **self.served.status(),
        }

    def check_health(self) -> None:
        """Serve's health check: a shard whose store is gone is restarted (and reopens once the store is back)."""
        if not self.store.ping():
            raise RuntimeError("the store does not answer")

    def __del__(self) -> None:
        served = getattr(self, "served", None)
        if served is not None:
            served.close()


class ShardSet:
    """The application's entry: it binds the shards so that Serve starts them together; callers hold each
    shard's own handle (`shard_handles`), so one that is down is seen as such, not waited on."""

    def __init__(self, *shards: Any) -> None:
        self.count = len(shards)


def application_name(collection: str) -> str:
    """A Serve application's name for a collection's key (which holds colons and an @)."""
    return "shards-" + re.sub(r"[^A-Za-z0-9_-]", "-", collection)


def deployment_name(shard: Shard) -> str:
    return shard.name


def deploy(config: ShardConfig, collection: str, count: int) -> list[Any]:
    """Start (or update) a collection's shards as one Serve application, the shards spread over the cluster's
    nodes and opened in parallel; returns each shard's handle once all of them serve."""
    from ray import serve

    serve.start(proxy_location="Disabled")
    shard = serve.deployment(
        num_replicas=1,
        ray_actor_options={"num_cpus": config.cpus},
        max_ongoing_requests=8,
        health_check_period_s=HEALTH_CHECK_SECONDS,
        health_check_timeout_s=10 * HEALTH_CHECK_SECONDS,
    )(IndexShard)
    bound = [shard.options(name=deployment_name(Shard(n, count))).bind(config, n, count) for n in range(count)]
    entry = serve.deployment(num_replicas=1, ray_actor_options={"num_cpus": 0})(ShardSet)
    serve.run(entry.bind(*bound), name=application_name(collection), route_prefix=None)
    return shard_handles(collection, count)


def shard_handles(collection: str, count: int) -> list[Any]:
    """A handle on each shard of a deployed collection, in shard order."""
    from ray import serve

    app = application_name(collection)
    return [serve.get_deployment_handle(deployment_name(Shard(n, count)), app_name=app) for n in range(count)]


def undeploy(collection: str) -> None:
    from ray import serve

    serve.delete(application_name(collection))
