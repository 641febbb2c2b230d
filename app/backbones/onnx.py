"""The same local weights on ONNX Runtime: exported once from the folder the torch backbone loads (torch's own
exporter, no network), optionally int8, and cached under the data folder by the weights' hash.

The pooling is part of the exported graph (the torch backbone's own `pool`), so a forward pass returns one
vector per text; SIF's token weights are a graph input, ones when a request has none.
"""

from __future__ import annotations

import importlib.util
import logging
import multiprocessing
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from app.backbones.architecture import Architecture, read_architecture
from app.backbones.catalog import register
from app.backbones.folder import ModelFolder, read_folder
from app.backbones.int8_check import check_int8, graph_agreement, read_check, write_check
from app.backbones.local import LocalBackbone
from app.backbones.pooling import pooling_named
from app.backbones.static_scales import calibration_texts, fix_scales, model_inputs
from app.backbones.tokens import Tokenizer, hash_weights, local_model
from app.core.names import Pooling

if TYPE_CHECKING:
    from torch import Tensor

    from app.core.config import Settings

log = logging.getLogger(__name__)
GRAPH_VERSION = 4  # bump when the graph or its quantization changes: cached exports and fingerprints follow (4: int8
# activations on scales fixed once, backbones/static_scales.py: vectors no longer depend on their batch-mates)
QUANTIZATIONS = ("int8", "none")
FUSION_AGREEMENT = 0.99999  # lowest cosine of the fused graph's vectors to the unfused one's, or it stays unfused
OPSET = 17


def _keeps_fp32(node_name: str) -> bool:
    """The dense layers int8 would hurt most stay fp32: each layer's FFN down-projection (its post-GELU inputs
    have outliers that dynamic per-tensor activation quantization clips) and the first layer's dense layers
    (every later one inherits their error). On 2,000 STS-B sentences, cosine to the torch vectors: all int8,
    mean 0.9926 and worst 0.968; with these fp32 (the fused attentions int8), 0.9964 and 0.983."""
    down_projection = node_name.endswith("/output/dense/MatMul") and "/attention/" not in node_name
    return down_projection or "/layer.0/" in node_name


def export_graph(model_path: Path, pooling: Pooling, out: Path) -> None:
    """Export encoder + pooling to ONNX (dynamic batch and length), from local weights only, then fuse it where
    ONNX Runtime's optimizer knows the architecture and the fused graph gives the same vectors."""
    import torch
    from transformers import AutoModel

    from app.backbones.pooling import hidden_states, pool

    # Eager attention exports the plain softmax(QK^T)V pattern that ONNX Runtime fuses into one Attention op.
    model = AutoModel.from_pretrained(model_path, local_files_only=True, attn_implementation="eager").eval()

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(
            self, input_ids: Tensor, attention_mask: Tensor, token_type_ids: Tensor, token_weights: Tensor
        ) -> Any:
            hidden = hidden_states(self.model, pooling, attention_mask, token_type_ids, input_ids=input_ids)
            weights = token_weights if pooling.averages_tokens else None
            return pool(pooling, hidden, attention_mask, weights)

    ids = torch.tensor([[1, 2, 3, 4], [1, 2, 3, 0]]).clamp(max=model.config.vocab_size - 1)  # any vocabulary
    mask = (ids != 0).long()
    names = ["input_ids", "attention_mask", "token_type_ids", "token_weights"]
    axes = {name: {0: "batch", 1: "tokens"} for name in names} | {"vector": {0: "batch"}}
    with torch.inference_mode():
        torch.onnx.export(
            Pooled(),
            (ids, mask, torch.zeros_like(ids), torch.ones(ids.shape)),
            str(out),
            input_names=names,
            output_names=["vector"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )
    architecture = read_architecture(model_path)
    if architecture.fuses:
        fuse_transformer_ops(out, architecture, model_path)


def fuse_transformer_ops(path: Path, architecture: Architecture, model_path: Path) -> None:
    """ONNX Runtime's BERT fusions, in place: one Attention, SkipLayerNorm, BiasGelu and EmbedLayerNorm op where
    the export has dozens of small ones. On 2 cores a forward pass of one short text costs ~25% less, and a
    round of 16 texts ~10% less; the vectors are the same to rounding, which is checked: else it stays unfused."""
    from onnxruntime.transformers.optimizer import optimize_model

    fused = path.with_name(path.name + ".fused")
    optimize_model(
        str(path), model_type="bert", num_heads=architecture.heads, hidden_size=architecture.hidden_size, opt_level=1
    ).save_model_to_file(str(fused))
    texts = calibration_texts()[::64]
    agreement = graph_agreement(path, fused, Tokenizer(model_path, min(512, architecture.positions)), texts)
    if agreement >= FUSION_AGREEMENT:
        os.replace(fused, path)
    else:
        log.info("%s: ONNX Runtime's fusions changed the vectors (cosine %.6f): left unfused", model_path, agreement)
        fused.unlink()


def quantize_int8(src: Path, dst: Path, model_path: Path) -> None:
    """Int8 weights, per output channel, on the dense layers and the fused attention's projections; activations
    quantized on scales calibrated once (static_scales), so that a text's vector never depends on its batch. Of the
    forms `bench-int8` measures, the fastest here, and batch-independent."""
    quantize_dynamic_int8(src, dst)
    fix_scales(dst, model_path)


def quantize_dynamic_int8(src: Path, dst: Path) -> None:
    """ONNX Runtime's dynamic quantization of the graph, the layers `_keeps_fp32` names left fp32: each activation's
    scale then comes from its whole batch (what fix_scales replaces)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    keep = [n.name for n in onnx.load(str(src)).graph.node if n.op_type == "MatMul" and _keeps_fp32(n.name)]
    quantize_dynamic(
        str(src),
        str(dst),
        per_channel=True,
        weight_type=QuantType.QInt8,
        op_types_to_quantize=["MatMul", "Attention"],
        nodes_to_exclude=keep,
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )  # fused ops' outputs are float


def graph_path(weights: str, pooling: Pooling, quantize: str, cache_dir: Path) -> Path:
    """Where the graph of these weights, pooling and quantization is kept."""
    return Path(cache_dir) / f"{weights[:16]}-{pooling}-v{GRAPH_VERSION}-{quantize}.onnx"


def drop_fp32_source(graph: Path) -> None:
    """Remove the fp32 graph an int8 one was quantized from, when the int8 graph kept the model (serving then never
    reads it; the image ships without it)."""
    check = read_check(graph)
    if graph.name.endswith("-int8.onnx") and (check is None or check.keeps):
        graph.with_name(graph.name.removesuffix("-int8.onnx") + "-none.onnx").unlink(missing_ok=True)


def can_export() -> bool:
    """The exporter's libraries (the offline extra) are installed: a missing graph can be made here."""
    return all(importlib.util.find_spec(name) is not None for name in ("torch", "transformers", "onnx"))


def missing_graph(model_path: Path, pooling: str, quantize: str, cache_dir: Path) -> str | None:
    """Why this graph cannot be served here (absent, and no exporter installed), or None when it can."""
    if can_export():
        return None
    weights = hash_weights(read_folder(Path(model_path)).weights)
    if graph_path(weights, pooling_named(pooling), quantize, cache_dir).exists():
        return None
    return (
        f"the ONNX graph for {pooling} pooling ({quantize}) is not in {cache_dir} and this install cannot export "
        f"it (no torch: pip install 'corrected-embeddings[offline]'); export it where torch is installed with "
        f"`python -m app export-onnx --pooling {pooling} --onnx-dir DIR` (the image: --build-arg ONNX_POOLINGS)"
    )


def cached_graph(folder: ModelFolder, weights: str, pooling: Pooling, quantize: str, cache_dir: Path) -> Path:
    """The graph for these weights, pooling and quantization: exported (and quantized, and checked) once, then
    reused."""
    path, fp32 = graph_path(weights, pooling, quantize, cache_dir), graph_path(weights, pooling, "none", cache_dir)
    model_path = folder.weights
    if path.exists():
        return path
    if not can_export():
        raise RuntimeError(missing_graph(model_path, pooling, quantize, cache_dir))
    path.parent.mkdir(parents=True, exist_ok=True)
    log.info("exporting %s (%s pooling, %s) to ONNX in %s", model_path.name, pooling, quantize, cache_dir)
    # In a child process: the export imports torch and transformers (~1 GB resident), which a server that
    # exported in-process would keep for its whole life, though it never runs them.
    child = multiprocessing.get_context("spawn").Process(
        target=_export, args=(folder, pooling, quantize, fp32, path), name="onnx-export"
    )
    child.start()
    child.join()
    if child.exitcode != 0 or not path.exists():
        raise RuntimeError(f"exporting {model_path.name} to ONNX failed (exit code {child.exitcode}; see above)")
    return path


def _export(folder: ModelFolder, pooling: Pooling, quantize: str, fp32: Path, path: Path) -> None:
    """The export itself, run in the child process cached_graph() starts; an int8 graph is checked against its fp32
    source before it is renamed into place, its verdict kept beside it."""
    if not fp32.exists():
        _write_atomically(fp32, lambda tmp: export_graph(folder.weights, pooling, tmp))
    if quantize == "int8":

        def quantized(tmp: Path) -> None:
            quantize_int8(fp32, tmp, folder.weights)
            write_check(path, check_int8(fp32, tmp, folder))

        _write_atomically(path, quantized)


def _write_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """`write` a temporary file of this process's own, then rename it: a reader never sees half a graph."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    write(tmp)
    os.replace(tmp, path)


class OnnxBackbone(LocalBackbone):
    """An ONNX Runtime session of the exported graph, then the folder's heads; length-sorted batches under a token
    budget. Int8 only where its check at quantization kept the model: else the fp32 graph, and the log says why."""

    def __init__(
        self,
        folder: ModelFolder | Path,
        *,
        cache_dir: Path,
        quantize: str = "int8",
        threads: int = 0,
        **options: Any,
    ):
        import onnxruntime as ort

        if quantize not in QUANTIZATIONS:
            raise ValueError(f"unknown quantization {quantize!r}; choose one of {', '.join(QUANTIZATIONS)}")
        folder = folder if isinstance(folder, ModelFolder) else read_folder(Path(folder))
        super().__init__(folder, **options)
        self.graph = cached_graph(folder, self.weights, self.pooling, quantize, cache_dir)
        self.int8_check = read_check(self.graph) if quantize == "int8" else None
        if self.int8_check is not None and not self.int8_check.keeps:
            log.warning("serving %s in fp32: int8 %s", self.name, self.int8_check.reason)
            quantize = "none"
            self.graph = cached_graph(folder, self.weights, self.pooling, quantize, cache_dir)
        self.quantize = quantize
        self.runtime = f"onnxruntime-{'fp32' if quantize == 'none' else quantize}"
        self.fingerprinted(runtime="onnxruntime", quantize=quantize, graph=GRAPH_VERSION)
        options_ = ort.SessionOptions()
        options_.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options_.intra_op_num_threads = threads or os.cpu_count() or 1
        options_.inter_op_num_threads = 1
        # ONNX Runtime's arena keeps the largest batch's buffers for good (80 MB after a request of long passages);
        # without it they go back to the heap, which the encoder trims when idle. No slower here.
        options_.enable_cpu_mem_arena = False
        self._session = ort.InferenceSession(str(self.graph), options_, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}  # the exporter drops inputs a graph ignores
        self._lock = threading.Lock()
        self._check_dim()

    def _pool_rows(self, ids: list[list[int]], types: list[list[int]], token_weights: np.ndarray | None) -> np.ndarray:
        feed = model_inputs(ids, self.tokens.pad_id, self._inputs, token_weights)
        return np.asarray(self._session.run(None, feed)[0])

    def describe(self) -> dict[str, Any]:
        check = self.int8_check
        return {**super().describe(), "int8_check": None if check is None else check.summary()}


@register("onnx")
def _from_settings(settings: Settings) -> OnnxBackbone:
    folder, options = local_model(settings)
    return OnnxBackbone(folder, cache_dir=settings.graphs_dir, quantize=settings.quantize, **options)
