"""Raw vectors as Redis keeps them: float16 at a cosine error measured on real sentences, float32 read as before."""

import numpy as np
import pytest

from app.core.config import MODELS_DIR, STS_DIR
from app.core.stored_vectors import COSINE_ERROR, from_stored, to_stored
from app.correction.pipeline import Correction, l2_normalize
from app.correction.publication import find_bundled
from app.offline.datasets import read_pairs
from app.store import DocumentRecord


def test_rows_round_trip_at_half_the_bytes_and_oversized_values_stay_float32():
    raw = np.random.default_rng(0).normal(size=(3, 8)).astype(np.float32)
    data, dtype = to_stored(raw)
    assert dtype == "float16" and len(data) == raw.nbytes // 2
    back = from_stored([data], [dtype], 8)
    assert back.dtype == np.float32 and back.shape == (3, 8)
    assert np.abs(back - raw).max() <= 1e-3 * np.abs(raw).max()
    huge = raw * 1e5
    data, dtype = to_stored(huge)
    assert dtype == "float32" and np.array_equal(from_stored([data], [dtype], 8), huge)


def test_mixed_records_decode_in_order_and_first_only_takes_each_first_row():
    a, b = np.arange(8, dtype=np.float32).reshape(2, 4), np.arange(8, 12, dtype=np.float32).reshape(1, 4)
    blobs, dtypes = [to_stored(a)[0], b.tobytes()], ["float16", "float32"]  # a new record, one written before
    assert np.array_equal(from_stored(blobs, dtypes, 4), np.vstack([a, b]))
    assert np.array_equal(from_stored(blobs, dtypes, 4, first_only=True), np.vstack([a[:1], b]))
    assert from_stored([], [], 4).shape == (0, 4)
    with pytest.raises(ValueError, match="unknown dtype"):
        from_stored(blobs, ["float16", "int8"], 4)


def test_a_record_written_before_dtypes_were_kept_reads_as_float32(store):
    vector = np.ones((1, 4), dtype=np.float32)
    store.documents.put("c", [DocumentRecord("new", "t", "{}", *to_stored(vector)[:1], "", "float16")])
    store.client.hset(
        store.documents.owned_key("doc", "c", "old"),
        mapping={"text": "t", "metadata": "{}", "vector": vector.tobytes()},
    )
    new, old = store.documents.get("c", ["new", "old"])
    assert (new.vector_dtype, old.vector_dtype) == ("float16", "float32")
    assert np.array_equal(
        from_stored([new.vector, old.vector], [new.vector_dtype, old.vector_dtype], 4), np.ones((2, 4))
    )


@pytest.mark.model
def test_float16_moves_cosines_of_real_sentences_by_under_2e_4_raw_and_corrected(minilm):
    pairs = read_pairs(STS_DIR / "sts-dev.csv")
    left, right = minilm.encode(pairs.left), minilm.encode(pairs.right)
    stored_left, stored_right = (from_stored([to_stored(x)[0]], ["float16"], x.shape[1]) for x in (left, right))
    correction = Correction(find_bundled(MODELS_DIR, minilm))  # whitening scales small axes up: the worst case
    for name, project in (("raw", l2_normalize), ("corrected", correction.apply)):
        exact = np.sum(project(left) * project(right), axis=1)
        kept = np.sum(project(stored_left) * project(stored_right), axis=1)
        error = np.abs(exact - kept)
        print(f"{name}: {len(error)} pairs, cosine error max {error.max():.2e}, mean {error.mean():.2e}")
        assert error.max() < COSINE_ERROR and error.mean() < 5e-5  # measured 4.4e-5 / 9e-6 raw, 4.8e-5 / 1e-5 whitened
