"""Prometheus metrics and request ids: what a dashboard and a log search need from every request."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUEST_ID = "x-request-id"
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")  # a caller's id is echoed only if it cannot inject anything
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
ROUND_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


class Metrics:
    """One registry per app (tests build several apps in one process)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "ce_http_requests", "HTTP requests by route and status.", ["route", "method", "status"],
            registry=self.registry,
        )  # fmt: skip
        self.latency = Histogram(
            "ce_http_request_duration_seconds", "Time to answer, by route.", ["route", "method"],
            buckets=LATENCY_BUCKETS, registry=self.registry,
        )  # fmt: skip
        self.round_texts = Histogram(
            "ce_encoder_round_texts", "Texts encoded together in one round (batch size).",
            buckets=ROUND_BUCKETS, registry=self.registry,
        )  # fmt: skip
        self.round_seconds = Histogram(
            "ce_encoder_round_seconds", "Time the backbone took for one round.", buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )  # fmt: skip
        self._service: Callable[[], object] | None = None
        self.registry.register(_ServiceCollector(self))

    def observe_round(self, texts: int, seconds: float) -> None:
        self.round_texts.observe(texts)
        self.round_seconds.observe(seconds)

    def watch(self, service_of: Callable[[], object]) -> None:
        """Read queue depth, index size and the served ids from the live service at every scrape."""
        self._service = service_of


class _ServiceCollector:
    """Values that are state, not events: read when Prometheus scrapes."""

    def __init__(self, metrics: Metrics):
        self.metrics = metrics

    def describe(self):
        return []

    def collect(self):
        service = self.metrics._service() if self.metrics._service else None
        if service is None:
            return
        stats = service.engine.stats()
        yield GaugeMetricFamily("ce_encoder_queue_texts", "Texts waiting to be encoded.", value=stats["queued_texts"])
        yield GaugeMetricFamily("ce_index_documents", "Documents in the served index.", value=len(service.index))
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


class RequestContextMiddleware:
    """Gives every response an X-Request-ID (the caller's if it is safe, else a new one) and records metrics."""

    def __init__(self, app: ASGIApp, metrics: Metrics):
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        offered = dict(scope["headers"]).get(REQUEST_ID.encode(), b"").decode("latin-1")
        request_id = offered if _SAFE_ID.match(offered) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        status = [500]
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (REQUEST_ID.encode(), request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", "unmatched")  # the template, so ids in paths do not explode labels
            method = scope["method"]
            self.metrics.requests.labels(path, method, str(status[0])).inc()
            self.metrics.latency.labels(path, method).observe(time.perf_counter() - started)
