"""`export-onnx`: the graphs an install without torch will serve, exported where torch is (the image's build
stage), each checked against the bundled correction it will serve with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from app.cli.options import EXIT_BAD_ARTIFACT, fail, guarded, poolings, settings_for


@guarded
def export_onnx(
    pooling: Annotated[
        list[str] | None, typer.Option(help="Pooling to export (repeatable); default CE_POOLING (mean).")
    ] = None,
    onnx_dir: Annotated[Path | None, typer.Option(help="Folder the graphs go to; default CE_ONNX_DIR.")] = None,
    check: Annotated[
        bool, typer.Option(help="Score each graph raw and with its bundled correction on STS-B dev; exit 3 if worse.")
    ] = True,
    keep_fp32: Annotated[
        bool, typer.Option(help="int8: keep the fp32 graph it was quantized from (serving does not read it).")
    ] = False,
) -> None:
    """Export the ONNX graph of each pooling (CE_QUANTIZE) and check it with its bundled correction; prints
    one JSON line per graph. What a container's build stage runs, so its run stage needs no torch."""
    from app.backbones.onnx import drop_fp32_source
    from app.offline.graph_export import export_graph_checked

    settings = settings_for()
    if onnx_dir is not None:
        settings = settings.model_copy(update={"onnx_dir": onnx_dir})
    chosen = poolings(pooling) if pooling else [settings.pooling]
    problems = []
    for name in chosen:
        result = export_graph_checked(settings, name, check=check)
        if not keep_fp32:
            drop_fp32_source(settings.graphs_dir / result.graph)
        print(json.dumps({**result.__dict__, "problem": result.problem}), flush=True)
        if check and result.problem:
            problems.append(result.problem)
    if problems:
        raise fail("; ".join(problems), EXIT_BAD_ARTIFACT)
