"""Rocchio's formula, checked by hand."""

from __future__ import annotations


def test_rocchio_moves_the_query_toward_the_mean_of_its_feedback_and_keeps_it_unit():
    import numpy as np

    from app.index.feedback import rocchio

    q, fb = np.array([1.0, 0.0, 0.0]), np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    moved = rocchio(q, fb, 1.0)
    expected = np.array([1.0, 0.5, 0.5]) / np.linalg.norm([1.0, 0.5, 0.5])
    np.testing.assert_allclose(moved, expected, rtol=1e-6)
    assert rocchio(q, fb[:0], 1.0) is q
