"""A compressed index (IVF over product-quantizer codes): chosen by `auto` past the limit, its candidates re-scored
exactly from the stored vectors at a calibrated depth, which a collection may set."""

import faiss
import numpy as np

from app.index import VectorIndex
from app.index.calibration import RERANK_DEPTHS, SearchDepth
from tests.index.test_faiss_index import clustered

FACTORY = "IVF16,PQ8x4fs"  # 32 dims in 8 codes of 4 bits: 4 bytes a vector


def built(n=6000, **options):
    x = clustered(n, seed=1)
    return x, VectorIndex.build(32, [f"d{i}" for i in range(n)], x, factory=FACTORY, recall=0.95, **options)


def stored(x):
    """The store's side: index keys -> exact vectors, a NaN row for a key no longer stored."""

    def vectors(keys):
        out = np.full((len(keys), x.shape[1]), np.nan, dtype=np.float32)
        for i, key in enumerate(keys):
            if key != "gone" and int(key[1:]) < len(x):
                out[i] = x[int(key[1:])]
        return out

    return vectors


def test_candidates_are_re_scored_exactly_and_the_re_rank_lifts_recall():
    x, index = built()
    assert index.lossy and index.params["rerank"] in RERANK_DEPTHS and index.describe()["compressed"]
    queries = clustered(200, seed=2)
    truth = faiss.knn(queries, x, 10, metric=faiss.METRIC_INNER_PRODUCT)[1]

    def recall(results):
        return np.mean(
            [len({int(k[1:]) for k, _ in hits} & set(t)) / 10 for hits, t in zip(results, truth.tolist(), strict=True)]
        )

    codes_only, reranked = index.search(queries, 10), index.search(queries, 10, exact=stored(x))
    assert recall(reranked) >= 0.95 > recall(codes_only)
    for q, hits in zip(queries, reranked, strict=True):
        rows = [int(k[1:]) for k, _ in hits]
        np.testing.assert_allclose([s for _, s in hits], x[rows] @ q, rtol=1e-6)  # exact cosines, not the codes'
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    approximate = [s for _, s in codes_only[0]]
    assert not np.allclose(approximate, x[[int(k[1:]) for k, _ in codes_only[0]]] @ queries[0], atol=1e-4)


def test_a_candidate_the_store_no_longer_has_is_dropped_not_scored():
    from app.index.rerank import rescored

    query = np.ones(2, dtype=np.float32)

    def vectors(keys):
        return np.array([[1, 0] if k == "a" else [np.nan, np.nan] if k == "gone" else [0, 2] for k in keys], "float32")

    assert rescored([("gone", 9.0), ("a", 1.0), ("b", 0.5)], query, vectors, 2) == [("b", 2.0), ("a", 1.0)]
    assert rescored([], query, vectors, 2) == []


def test_a_collections_depth_overrides_the_calibrated_one_and_survives_a_snapshot():
    x, index = built(3000, depth=SearchDepth(probe=3, rerank=20))
    assert index.searched_with == {"nprobe": 3, "rerank": 20} != index.params
    assert index.describe()["params"] == {"nprobe": 3, "rerank": 20}
    assert index.describe()["calibrated"] == index.params
    deep = VectorIndex.from_state(*index.state(), depth=SearchDepth(probe=16, rerank=400))
    assert deep.params == index.params and deep.searched_with == {"nprobe": 16, "rerank": 400}
    found = deep.search(x[:50], 10, exact=stored(x))
    assert all(hits[0][0] == f"d{i}" for i, hits in enumerate(found))  # every list probed, 400 re-scored: exact
