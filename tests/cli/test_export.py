"""`export-onnx`'s options refused before anything is exported; the export itself: tests/offline/."""

from __future__ import annotations

import pytest

from tests.cli.conftest import run_cli


@pytest.mark.process
def test_an_unknown_pooling_is_named_before_any_export(tmp_path):
    done = run_cli(
        "export-onnx", "--pooling", "maximum", "--onnx-dir", str(tmp_path), env={"CE_DATA_DIR": str(tmp_path)}
    )
    assert done.returncode == 2 and "unknown pooling 'maximum'" in done.stderr and not any(tmp_path.iterdir())
