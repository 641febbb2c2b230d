"""An index filled a chunk at a time: past the sample it holds one chunk, and finds what one built in memory finds."""

import faiss
import numpy as np

from app.index.calibration import RERANK_DEPTHS
from tests.index.test_faiss_index import clustered
from tests.index.test_rerank import stored

FACTORY = "IVF16,PQ8x4fs"  # 32 dims in 8 codes of 4 bits: 4 bytes a vector


def test_a_build_from_chunks_past_the_sample_holds_one_chunk_and_finds_what_one_from_memory_finds(monkeypatch):
    from app.index import streaming

    monkeypatch.setattr(streaming, "TRAIN_SAMPLE", 2000)
    x = clustered(8000, seed=3)
    keys = [f"d{i}" for i in range(len(x))]
    filling = streaming.ChunkedBuild(32, len(x), factory=FACTORY, recall=0.95)
    for start in range(0, len(x), 500):
        filling.add(keys[start : start + 500], x[start : start + 500])
        assert sum(len(v) for v in filling._held) < 2000  # past the sample, nothing is held
    index = filling.finish(stored(x))
    assert len(index) == 8000 and index.params["rerank"] in RERANK_DEPTHS and index.trained_size == 8000
    queries = clustered(100, seed=4)
    truth = faiss.knn(queries, x, 10, metric=faiss.METRIC_INNER_PRODUCT)[1]
    found = index.search(queries, 10, exact=stored(x))
    recall = np.mean(
        [len({int(k[1:]) for k, _ in h} & set(t)) / 10 for h, t in zip(found, truth.tolist(), strict=True)]
    )
    assert recall >= 0.95
    small = streaming.ChunkedBuild(32, 1500, factory="Flat")
    small.add(keys[:1500], x[:1500])
    assert small.finish().search(x[:1], 1)[0][0][0] == "d0"  # under the sample: built from memory, as before
