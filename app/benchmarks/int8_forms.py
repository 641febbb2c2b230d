"""`bench-int8`: the quantized forms of the default graph, measured in-process on the machine at hand. Each is timed,
compared with fp32 (lowest centred cosine) and checked for batch independence (a text alone against the same text
among longer ones): the form served must hold both and be the fastest that does."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from app.backbones.int8_check import cosines
from app.backbones.onnx import OnnxBackbone, graph_path, quantize_dynamic_int8
from app.backbones.static_scales import BATCH, calibration_texts, model_inputs
from app.backbones.tokens import Tokenizer
from app.benchmarks.throughput import cpu

ROUNDS = 3  # timed passes over the texts; the best one counts (a shared machine's noise only slows)


def static_qdq(src: Path, dst: Path, tokens: Tokenizer) -> None:
    """ONNX Runtime's static quantization (QDQ, scales calibrated on the fixed set), the same layers left fp32."""
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    from app.backbones.onnx import _keeps_fp32

    names = {i.name for i in ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).get_inputs()}
    ids = tokens.ids(calibration_texts()[:400])

    class Reader:  # what quantize_static reads calibration batches from (onnxruntime's CalibrationDataReader)
        def __init__(self) -> None:
            batches = range(0, len(ids), BATCH)
            self.feeds = iter([model_inputs(ids[i : i + BATCH], tokens.pad_id, names) for i in batches])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.feeds, None)

        def __iter__(self) -> Any:
            return iter(self.get_next, None)

    keep = [n.name for n in onnx.load(str(src)).graph.node if n.op_type == "MatMul" and _keeps_fp32(n.name)]
    quantize_static(
        str(src),
        str(dst),
        Reader(),
        quant_format=QuantFormat.QDQ,
        per_channel=True,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        op_types_to_quantize=["MatMul"],
        nodes_to_exclude=keep,
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )


def _session(path: Path, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _encode(session: Any, ids: list[list[int]], pad: int, rows: list[int], batch: int) -> np.ndarray:
    names = {i.name for i in session.get_inputs()}
    out: dict[int, np.ndarray] = {}
    for start in range(0, len(rows), batch):
        chunk = rows[start : start + batch]
        out.update(zip(chunk, session.run(None, model_inputs([ids[i] for i in chunk], pad, names))[0], strict=True))
    return np.stack([out[i] for i in rows])


def measure(graphs: dict[str, Path], tokens: Tokenizer, texts: list[str], threads: int) -> list[dict[str, Any]]:
    """Each form's sentences/s (length-sorted batches of 32), its lowest centred cosine to the first form's vectors,
    and the lowest cosine of a text alone to the same text batched with the longest ones."""
    ids = tokens.ids(texts)
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    probe, longest = order[:: max(1, len(order) // 20)][:20], order[-12:]
    rows, reference = [], None
    for name, path in graphs.items():
        session = _session(path, threads)
        _encode(session, ids, tokens.pad_id, order[:64], BATCH)  # warm
        best = 0.0
        for _ in range(ROUNDS):
            start = time.perf_counter()
            vectors = _encode(session, ids, tokens.pad_id, order, BATCH)
            best = max(best, len(order) / (time.perf_counter() - start))
        reference = vectors if reference is None else reference
        mean = reference.mean(axis=0)
        alone = _encode(session, ids, tokens.pad_id, probe, 1)
        together = _encode(session, ids, tokens.pad_id, probe + longest, BATCH)[: len(probe)]
        rows.append(
            {
                "form": name,
                "sentences_per_s": round(best, 1),
                "lowest_centred_cosine_to_fp32": round(float(cosines(vectors - mean, reference - mean).min()), 4),
                "batch_independence": round(float(cosines(alone, together).min()), 6),
                "mb": round(path.stat().st_size / 2**20, 1),
            }
        )
    return rows


def run(backbone: OnnxBackbone, texts: list[str], work: Path, threads: int = 2) -> dict[str, Any]:
    """fp32, the served int8 (fixed scales), dynamic int8 and static QDQ int8 of the backbone's graph."""
    fp32 = graph_path(backbone.weights, backbone.pooling, "none", backbone.graph.parent)
    int8 = graph_path(backbone.weights, backbone.pooling, "int8", backbone.graph.parent)
    if not (fp32.exists() and int8.exists()):
        raise ValueError(f"bench-int8 needs both graphs in {fp32.parent}: serve once with CE_QUANTIZE=none and int8")
    dynamic, static = work / "dynamic-int8.onnx", work / "static-qdq-int8.onnx"
    quantize_dynamic_int8(fp32, dynamic)
    static_qdq(fp32, static, backbone.tokens)
    graphs = {"fp32": fp32, "int8, fixed scales (served)": int8, "int8, dynamic": dynamic, "int8, static QDQ": static}
    return {"cpu": cpu(), "texts": len(texts), "forms": measure(graphs, backbone.tokens, texts, threads)}
