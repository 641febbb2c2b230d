"""`bench`: the service's throughput and latency over HTTP as ratios to the backbone called in-process (every
runtime of its weights), to sentence-transformers, and beside long texts; what it prints."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from app.backbones import build_backbone
from app.backbones.base import Backbone
from app.benchmarks.http import peak_rss_mb, running_service
from app.benchmarks.throughput import (
    batch_setter,
    cpu,
    http_load,
    in_process_limit,
    percentile,
    sentence_transformers_rate,
    single_client_latency,
    single_client_latency_beside,
    single_text_seconds,
)
from app.core.config import Settings
from app.correction import Correction
from app.correction.publication import find_bundled

RUNTIMES = (("huggingface", "none"), ("onnx", "none"), ("onnx", "int8"))  # torch fp32, ONNX fp32, ONNX int8


def runtime_limits(
    settings: Settings, sentences: list[str], say: Callable[[str], None]
) -> tuple[dict[str, float], Backbone, float, int]:
    """Every runtime of these weights and this pooling in-process (what each could serve at best), and the served
    one's backbone, limit and best batch: the ratios' yardstick, measured once."""
    served = (settings.backbone, settings.quantize if settings.backbone == "onnx" else "none")
    limits: dict[str, float] = {}
    found: tuple[Backbone, tuple[float, int]] | None = None
    for runtime, quantize in RUNTIMES:
        say(f"in-process limit of {runtime} ({quantize}) over {len(sentences)} sentences ...")
        other = build_backbone(settings.model_copy(update={"backbone": runtime, "quantize": quantize}))
        best = in_process_limit(batch_setter(other), sentences)
        limits[f"{runtime}_{quantize}"] = round(best[0], 1)
        if (runtime, quantize) == served:
            found = (other, best)
        del other
    if found is None:  # another registered backbone (the weight-free one, say)
        backbone = build_backbone(settings)
        found = (backbone, in_process_limit(batch_setter(backbone), sentences))
    backbone, (limit, best_batch) = found
    return limits, backbone, limit, best_batch


def run_bench(settings: Settings, sentences: list[str], say: Callable[[str], None]) -> dict[str, Any]:
    """Every figure `bench` reports, one JSON object."""
    limits, backbone, limit, best_batch = runtime_limits(settings, sentences, say)
    one_text = single_text_seconds(batch_setter(backbone)(best_batch))
    correction_share = None
    artifact = find_bundled(settings.models_dir, backbone)
    if artifact is not None:
        raw = backbone.encode(sentences[:512])
        start = time.perf_counter()
        Correction(artifact).apply(raw)
        correction_share = (time.perf_counter() - start) / (len(raw) / limit)
    say("sentence-transformers in-process ...")
    baseline = sentence_transformers_rate(sentences)
    say("starting the service ...")
    with running_service({"CE_BATCH_SIZE": str(best_batch)}, reuse=[settings.graphs_dir]) as (url, pid):
        http_load(url, sentences[:256], clients=8, per_request=8, name="warm-up")
        patterns = {
            "a_8_clients_x_8_texts": http_load(url, sentences, clients=8, per_request=8, name="a"),
            "b_32_clients_x_1_text": http_load(url, sentences, clients=32, per_request=1, name="b"),
        }
        latencies = single_client_latency(url)
        long_texts = [" ".join(sentences[i : i + 300])[:20_000] for i in range(0, 8 * 40, 40)]
        beside = single_client_latency_beside(url, long_texts)
        rss = peak_rss_mb(pid)
    return {
        "cpu": cpu(),
        "backbone": backbone.name,
        "runtime": settings.backbone,
        "quantize": settings.quantize if settings.backbone == "onnx" else None,
        "pooling": settings.pooling,
        "sentences": len(sentences),
        "limit_sentences_per_s": round(limit, 1),
        "limit_batch_size": best_batch,
        "limits_by_runtime": limits,
        "sentence_transformers_per_s": round(baseline, 1),
        **{name: r.summary(limit, baseline) for name, r in patterns.items()},
        "single_text_p50_ms": round(percentile(latencies, 50) * 1000, 2),
        "single_text_p99_ms": round(percentile(latencies, 99) * 1000, 2),
        "single_text_in_process_ms": round(one_text * 1000, 2),
        "single_text_ratio": round(percentile(latencies, 50) / one_text, 2),
        "single_text_beside_long_texts_p50_ms": round(percentile(beside, 50) * 1000, 2),
        "correction_share_of_encoding": None if correction_share is None else round(correction_share, 4),
        "server_peak_rss_mb": round(rss, 1),
    }


def bench_lines(result: dict[str, Any]) -> list[str]:
    """What `bench` prints for a reader, from its figures."""
    limits = result["limits_by_runtime"]
    lines = [
        f"CPU: {result['cpu']['model']}; int8 instructions: {', '.join(result['cpu']['int8_instructions']) or 'none'}",
        f"limit (in-process, batch {result['limit_batch_size']}): {result['limit_sentences_per_s']:.0f} sentences/s; "
        f"sentence-transformers in-process: {result['sentence_transformers_per_s']:.0f} sentences/s",
        "in-process limit of each runtime: " + ", ".join(f"{k} {v:.0f}/s" for k, v in limits.items()),
    ]
    for name in ("a_8_clients_x_8_texts", "b_32_clients_x_1_text"):
        summary = result[name]
        lines.append(
            f"{name}: {summary['sentences_per_s']:.0f} sentences/s = {summary['ratio_to_limit']:.2f} x limit "
            f"= {summary['ratio_to_sentence_transformers']:.2f} x sentence-transformers, "
            f"p50 {summary['p50_ms']} ms, p99 {summary['p99_ms']} ms, errors {summary['errors']}"
        )
    lines.append(
        f"single short text: p50 {result['single_text_p50_ms']} ms over HTTP vs "
        f"{result['single_text_in_process_ms']} ms in-process = {result['single_text_ratio']}x; "
        f"p50 {result['single_text_beside_long_texts_p50_ms']} ms while 32 clients send 20,000-character "
        "texts that must be tokenized to be refused"
    )
    lines.append(
        f"correction: {result['correction_share_of_encoding']} of encoding time; "
        f"peak RSS {result['server_peak_rss_mb']:.0f} MB"
    )
    return lines
