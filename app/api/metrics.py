"""Prometheus metrics: requests and latency by route, encoder rounds, and the served state read at each scrape."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily, Metric

if TYPE_CHECKING:
    from app.services.container import Services

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
ROUND_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


class Metrics:
    """One registry per app (tests build several apps in one process)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "ce_http_requests",
            "HTTP requests by route and status.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "ce_http_request_duration_seconds",
            "Time to answer, by route.",
            ["route", "method"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.round_texts = Histogram(
            "ce_encoder_round_texts",
            "Texts encoded together in one round (batch size).",
            buckets=ROUND_BUCKETS,
            registry=self.registry,
        )
        self.round_seconds = Histogram(
            "ce_encoder_round_seconds",
            "Time the backbone took for one round.",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.imported = Counter(
            "ce_imported_documents",
            "Documents imported: written from their exported vectors, encoded, or skipped as already stored.",
            ["collection", "how"],
            registry=self.registry,
        )
        self._services: Callable[[], Services | None] | None = None
        self.registry.register(_ServiceCollector(self))

    def observe_round(self, texts: int, seconds: float) -> None:
        self.round_texts.observe(texts)
        self.round_seconds.observe(seconds)

    def watch(self, services_of: Callable[[], Services | None]) -> None:
        """Read queue depth, index size and the served ids from the live services at every scrape."""
        self._services = services_of


class _ServiceCollector:
    """Values that are state, not events: read when Prometheus scrapes."""

    def __init__(self, metrics: Metrics):
        self.metrics = metrics

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        service = self.metrics._services() if self.metrics._services else None
        if service is None:
            return
        stats = service.engine.stats()
        yield GaugeMetricFamily("ce_encoder_queue_texts", "Texts waiting to be encoded.", value=stats["queued_texts"])
        yield CounterMetricFamily(
            "ce_encoder_texts_encoded", "Texts the default backbone encoded.", value=stats["texts_encoded"]
        )
        yield CounterMetricFamily(
            "ce_encoder_texts_dropped",
            "Texts never encoded: their request timed out (504) or was given up first.",
            value=stats["texts_dropped"],
        )
        yield GaugeMetricFamily(
            "ce_index_documents", "Documents in the served index.", value=service.served.current.documents
        )
        info = InfoMetricFamily("ce_service", "The backbone and correction being served.")
        correction = service.correction
        info.add_metric(
            [],
            {
                "backbone": service.backbone.name,
                "pooling": service.backbone.pooling,
                "fingerprint": service.backbone.fingerprint,
                "correction": correction.id if correction else "none",
                "index": service.index.factory,
            },
        )
        yield info
        documents = GaugeMetricFamily(
            "ce_collection_documents", "Documents in each open collection's index.", labels=["collection"]
        )
        served = InfoMetricFamily(
            "ce_collection", "Each open collection's backbone, pooling and correction.", labels=["collection"]
        )
        drift = GaugeMetricFamily(
            "ce_index_drift",
            "Documents each index differs from the store by at the last check (a drifted one is rebuilt).",
            labels=["collection", "index"],
        )
        for collection in service.collections.open_collections():
            index = collection.services.served.current
            documents.add_metric([collection.spec.name], index.documents)
            if (check := collection.services.served.integrity) is not None:
                for name, found in (("dense", check.dense), ("lexical", check.lexical)):
                    if found is not None:
                        drift.add_metric([collection.spec.name, name], found.count)
            served.add_metric(
                [collection.spec.name],
                {
                    "backbone": collection.spec.backbone,
                    "pooling": collection.spec.pooling,
                    "correction": index.correction_id or "none",
                },
            )
        yield documents
        yield served
        yield drift
