"""MMR checked by hand: weight 1 keeps the relevance order, a lower weight skips a near-duplicate of a chosen one."""

import numpy as np

from app.index.mmr import mmr_order


def unit(*rows):
    v = np.array(rows, dtype=np.float64)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_weight_one_is_the_relevance_order_and_a_lower_weight_skips_the_near_duplicate():
    vectors = unit([1, 0, 0], [0.99, 0.1, 0], [0, 1, 0], [0, 0, 1])
    relevance = np.array([0.9, 0.89, 0.6, 0.3])
    assert mmr_order(relevance, vectors, 1.0, 4) == [0, 1, 2, 3]
    assert mmr_order(relevance, vectors, 0.5, 3) == [0, 2, 3]  # 1 is nearly 0: it comes after the others
    assert mmr_order(relevance, vectors, 0.5, 10) == [0, 2, 3, 1]


def test_a_missing_vector_is_never_near_anything_and_empty_input_gives_nothing():
    vectors = unit([1, 0], [1, 0])
    vectors[1] = np.nan
    assert mmr_order(np.array([0.9, 0.8]), vectors, 0.5, 2) == [0, 1]
    assert mmr_order(np.array([]), np.zeros((0, 2)), 0.5, 3) == []
