"""The report: every report method fitted and scored per pooling, and the summary written with what `auto` chose."""

from __future__ import annotations

import numpy as np

from app.benchmarks.report import REPORT_METHODS, evaluate_methods, write_markdown
from app.correction.selection import TuningPairs


def test_every_method_is_scored_and_the_summary_names_autos_choice(artifact_factory, tmp_path):
    rng = np.random.default_rng(0)
    left = rng.standard_normal((80, 8)) + 2.0
    right = left + 0.5 * rng.standard_normal((80, 8))
    test = TuningPairs(left, right, rng.uniform(0, 5, 80), "test")
    fitted = artifact_factory(np.vstack([left, right]))
    result = evaluate_methods(lambda method, params: fitted, test, "mean")
    assert set(result.scores) == {label for label, _, _ in REPORT_METHODS} and result.auto is fitted
    assert all(-100 <= s <= 100 for s in result.scores.values()) and set(result.dims.values()) == {8}
    sources = {"fit": "train.csv", "tune": "train+dev", "test": "test.csv"}
    text = write_markdown(tmp_path / "report.md", [result], backbone="hashing", sources=sources, plots={}).read_text()
    assert text.startswith("# Correction report: hashing") and "| mean | " in text
    assert "- mean: `whitening`" in text and "## mean: isotropy of the fitting corpus, raw vs `auto`" in text
