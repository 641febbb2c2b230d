"""The architecture table of "Serve your model": each served encoder, as a tiny random sentence-transformers folder,
against sentence-transformers itself on torch, ONNX Runtime fp32 and the default (int8 where its check holds)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from app.backbones import build_backbone
from app.backbones.architecture import FUSED_AS_BERT
from app.backbones.int8_check import cosines
from app.backbones.onnx import OnnxBackbone
from app.backbones.prompts import prompted
from app.benchmarks.model_folders import RECIPES, build, texts
from app.core.config import Settings


def _lowest(ours: np.ndarray, theirs: np.ndarray) -> float:
    return float(cosines(ours, theirs).min())


def row(recipe: Any, root: Path) -> dict[str, Any]:
    """One architecture: the lowest cosine to sentence-transformers of each runtime over texts of 3 to 1,000 tokens
    (document prompt), and the int8 check the default backbone made."""
    from sentence_transformers import SentenceTransformer

    folder, batch = build(recipe, root), texts()
    theirs = SentenceTransformer(str(folder)).encode(batch, prompt_name="document")
    runtimes = {
        "torch": Settings(backbone="huggingface", model_path=folder),
        "onnx_fp32": Settings(model_path=folder, quantize="none", data_dir=root / "data"),
        "default": Settings(model_path=folder, data_dir=root / "data"),
    }
    out: dict[str, Any] = {"architecture": recipe.architecture, "fused": recipe.architecture in FUSED_AS_BERT}
    for name, settings in runtimes.items():
        backbone = build_backbone(settings)
        out[name] = round(_lowest(backbone.encode(prompted(backbone.prompts.document, batch)), theirs), 6)
        if isinstance(backbone, OnnxBackbone) and name == "default":
            check = backbone.int8_check
            out["served"] = backbone.runtime
            out["int8_lowest_centred_cosine"] = check.lowest_cosine if check else None
    return out


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        return [row(recipe, Path(tmp)) for recipe in RECIPES]


def table(rows: list[dict[str, Any]]) -> list[str]:
    """The rows as the page's markdown table."""
    lines = [
        "| architecture | ORT fusions | torch | ONNX fp32 | int8 check (lowest centred cosine) | served by default |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['architecture']} | {'yes' if r['fused'] else 'no'} | {r['torch']:.6f} | {r['onnx_fp32']:.6f} | "
            f"{r['int8_lowest_centred_cosine']} | {r['served']} ({r['default']:.6f}) |"
        )
    return lines
