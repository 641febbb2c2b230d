"""OpenTelemetry traces, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: a span per request (the FastAPI
instrumentation) tagged with its request id, and under it the encoder round, the index searches and each Redis call.
Off, every span here is OpenTelemetry's no-op one."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.util.types import AttributeValue

if TYPE_CHECKING:  # the SDK and FastAPI are only needed once tracing is on
    from fastapi import FastAPI
    from opentelemetry.sdk.trace import SpanProcessor
    from opentelemetry.sdk.trace.export import SpanExporter

SERVICE = "corrected-embeddings"
_tracer: trace.Tracer = trace.NoOpTracer()
_provider = None  # the SDK's TracerProvider while tracing is on


def span(name: str, **attributes: AttributeValue) -> AbstractContextManager[trace.Span]:
    """A child of whatever span is current (the request's, on its thread or task)."""
    return _tracer.start_as_current_span(name, attributes=attributes)


def current_context() -> Context:
    """Captured where work is queued, so that the thread doing it can file its span under the request."""
    return otel_context.get_current()


def round_span(contexts: Sequence[Context], **attributes: AttributeValue) -> AbstractContextManager[trace.Span]:
    """An encoder round: under the first request it serves, linked to every other one it serves."""
    links = [trace.Link(trace.get_current_span(c).get_span_context()) for c in contexts[1:]]
    return _tracer.start_as_current_span(
        "encoder.round", context=contexts[0] if contexts else None, links=links, attributes=attributes
    )


def flush() -> None:
    """Send what is batched (at shutdown: a process killed before its batch left loses it)."""
    if _provider is not None:
        _provider.force_flush()


def tag_request(request_id: str) -> None:
    trace.get_current_span().set_attribute("http.request_id", request_id)


def install(app: FastAPI, exporter: SpanExporter | None = None) -> Callable[[], None] | None:
    """Trace `app` to the OTLP endpoint the environment names (or to `exporter`, a test's); returns what undoes
    it, or None when tracing stays off."""
    global _tracer, _provider
    if exporter is None and not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return None
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    processor: SpanProcessor
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        processor = BatchSpanProcessor(OTLPSpanExporter())  # endpoint, headers, timeout: the OTEL_ variables
    else:
        processor = SimpleSpanProcessor(exporter)
    provider = TracerProvider(resource=Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", SERVICE)}))
    provider.add_span_processor(processor)
    _tracer, _provider = provider.get_tracer(SERVICE), provider
    FastAPIInstrumentor.instrument_app(app, tracer_provider=provider, exclude_spans=["receive", "send"])
    RedisInstrumentor().instrument(tracer_provider=provider)

    def uninstall() -> None:
        global _tracer, _provider
        RedisInstrumentor().uninstrument()
        FastAPIInstrumentor.uninstrument_app(app)
        provider.shutdown()
        _tracer, _provider = trace.NoOpTracer(), None

    return uninstall
