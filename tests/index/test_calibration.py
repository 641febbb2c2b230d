"""The search depth calibrated for the recall target, checked on queries it was not calibrated on."""

import numpy as np
import pytest

from app.index import VectorIndex
from tests.index.test_faiss_index import clustered


@pytest.mark.parametrize("factory", ["IVF64,Flat", "HNSW16"])
def test_calibration_reaches_the_recall_target_on_new_queries(factory):
    x = clustered(6000, seed=1)
    index = VectorIndex.build(32, [f"d{i}" for i in range(6000)], x, factory=factory, recall=0.9)
    assert index.params  # nprobe or efSearch was chosen, not left at FAISS's default
    queries = clustered(200, seed=2)
    truth = np.argsort(-(queries @ x.T), axis=1)[:, :10]
    found = index.search(queries, 10)
    recall = np.mean([len({f"d{j}" for j in t} & {h[0] for h in f}) / 10 for t, f in zip(truth, found, strict=True)])
    assert recall >= 0.9


def test_a_widened_search_probes_more_lists_and_every_one_at_most():
    import math

    import faiss

    from app.index.calibration import search_parameters
    from app.index.factories import new_faiss_index

    index = new_faiss_index(8, "IVF16,Flat")
    assert search_parameters(index, {"nprobe": 3}).nprobe == 3
    assert search_parameters(index, {"nprobe": 3}, widen=2.5).nprobe == 8
    assert search_parameters(index, {"nprobe": 3}, widen=math.inf).nprobe == 16
    hnsw = search_parameters(new_faiss_index(8, "HNSW16"), {"efSearch": 20}, widen=math.inf)
    assert isinstance(hnsw, faiss.SearchParametersHNSW) and hnsw.efSearch == 160
