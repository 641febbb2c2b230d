"""`bench-search`'s hybrid documents: three sentences each, raw vectors sampled at the backbone's scale, float16."""

from __future__ import annotations

import numpy as np

from app.benchmarks.hybrid import synthetic_records
from app.core.stored_vectors import from_stored


def test_records_come_in_batches_with_vectors_at_the_raw_scale():
    rng = np.random.default_rng(0)
    raw = (rng.standard_normal((300, 8)) + 2.0).astype(np.float32)
    sentences = [f"sentence {i} about rivers" for i in range(50)]
    records = [r for batch in synthetic_records(sentences, raw, 120) for r in batch]
    assert [r.id for r in records] == [f"d{i}" for i in range(120)] and len({r.text for r in records}) > 100
    assert all(r.text.count("sentence") == 3 and r.vector_dtype == "float16" for r in records)
    vectors = from_stored([r.vector for r in records], [r.vector_dtype for r in records], 8)
    assert abs(np.linalg.norm(vectors, axis=1).mean() - np.linalg.norm(raw, axis=1).mean()) < 0.01 * 8
