"""Throughput's helpers: the percentile every benchmark prints."""

from __future__ import annotations

from app.benchmarks.throughput import percentile


def test_percentiles_are_the_nearest_rank_of_the_sorted_values():
    values = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert [percentile(values, q) for q in (0, 50, 99, 100)] == [1.0, 3.0, 5.0, 5.0]
    assert percentile([7.0], 99) == 7.0
