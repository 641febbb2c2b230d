"""The ONNX graphs an install will serve, exported ahead of time (the image's build stage) and checked there:
the bundled correction for each must match the graph's backbone and still help it on STS-B dev."""

from __future__ import annotations

import time
from dataclasses import dataclass

from app.backbones import build_backbone
from app.backbones.onnx import OnnxBackbone
from app.core.config import STS_DIR, Settings
from app.correction.pipeline import Correction, pooling_weights
from app.correction.publication import find_bundled
from app.offline.datasets import read_pairs
from app.offline.evaluation import spearman_x100

CHECK_PAIRS = STS_DIR / "sts-dev.csv"  # in the bundled corrections' tuning pairs, never in their test split


@dataclass(frozen=True)
class GraphCheck:
    """One exported graph, the bundled correction it serves with, and both scores on the check pairs."""

    pooling: str
    graph: str
    graph_mb: float
    fingerprint: str
    correction: str | None
    method: str | None
    raw: float | None
    corrected: float | None
    seconds: float

    @property
    def problem(self) -> str | None:
        """Why this graph must not ship (no bundled correction fits it; the correction makes it worse), or None."""
        if self.correction is None:
            return f"no bundled correction matches the {self.pooling} graph (fingerprint {self.fingerprint})"
        if self.raw is not None and self.corrected is not None and self.corrected < self.raw:
            worse = f"{self.raw:.2f} -> {self.corrected:.2f}"
            return f"the bundled correction makes {self.pooling} worse on STS-B dev: {worse}"
        return None


def export_graph_checked(settings: Settings, pooling: str, *, check: bool = True) -> GraphCheck:
    """Export (or find) the graph of `pooling` in settings.graphs_dir; with `check`, score it raw and corrected."""
    start = time.perf_counter()
    backbone = build_backbone(settings.model_copy(update={"backbone": "onnx", "pooling": pooling}))
    if not isinstance(backbone, OnnxBackbone):
        raise TypeError(f"the onnx backbone built a {type(backbone).__name__}")
    graph = backbone.graph
    artifact = find_bundled(settings.models_dir, backbone)
    raw = corrected = None
    if check and artifact is not None:
        pairs = read_pairs(CHECK_PAIRS)
        correction = Correction(artifact)
        weights = pooling_weights(correction)
        raw_left, raw_right = backbone.encode(pairs.left), backbone.encode(pairs.right)
        raw = spearman_x100(raw_left, raw_right, pairs.scores)
        if weights is not None:  # SIF pools with its own token weights
            raw_left, raw_right = backbone.encode(pairs.left, weights), backbone.encode(pairs.right, weights)
        corrected = spearman_x100(correction.apply(raw_left), correction.apply(raw_right), pairs.scores)
    return GraphCheck(
        pooling=str(pooling),
        graph=graph.name,
        graph_mb=round(graph.stat().st_size / 2**20, 1),
        fingerprint=backbone.fingerprint,
        correction=artifact.id if artifact else None,
        method=artifact.method if artifact else None,
        raw=None if raw is None else round(raw, 2),
        corrected=None if corrected is None else round(corrected, 2),
        seconds=round(time.perf_counter() - start, 1),
    )
