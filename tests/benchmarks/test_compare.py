"""`compare`'s table: methods down, poolings across, n/a where a method does not apply, and its JSON records."""

from __future__ import annotations

from app.benchmarks.compare import ComparisonRow, as_records, markdown_table


def row(pooling, label, spearman, dim, fit, apply):
    return ComparisonRow(pooling, label, label, {}, spearman, dim, fit, apply)


def test_the_table_puts_each_method_on_a_line_and_marks_what_does_not_apply():
    rows = [
        row("mean", "none", 74.123, 384, 0.0, 0.01),
        row("cls", "none", 70.0, 384, 0.0, 0.02),
        row("mean", "sif", 76.5, 384, 1.5, 0.5),
    ]
    table = markdown_table(rows).splitlines()
    assert table[0] == "| method | mean | cls | fit s | apply ms / 1k |" and table[1] == "|---|---|---|---|---|"
    assert table[2] == "| none | 74.12 (384) | 70.00 (384) | 0.0/0.0 | 0.02 |"
    assert table[3] == "| sif | 76.50 (384) | n/a | 1.5 | 0.50 |"  # SIF has no meaning for CLS
    assert as_records(rows[:1]) == [
        {
            "pooling": "mean",
            "label": "none",
            "method": "none",
            "params": {},
            "spearman": 74.12,
            "dim": 384,
            "fit_seconds": 0.0,
            "apply_ms_per_1000": 0.01,
        }
    ]
