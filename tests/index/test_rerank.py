"""A compressed index (IVF over product-quantizer codes): chosen by `auto` past the limit, its candidates re-scored
exactly from the stored vectors at a calibrated depth, which a collection may set."""

import faiss
import numpy as np

from app.index import VectorIndex, factories
from app.index.calibration import RERANK_DEPTHS, SearchDepth
from app.index.factories import compressed_factory, ivf_lists, resolve_factory
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


def test_auto_keeps_codes_past_the_limit_and_an_index_of_full_vectors_asks_to_be_rebuilt(monkeypatch):
    assert resolve_factory("auto", 2_000_000, 384) == "IVF4096,Flat"
    assert resolve_factory("auto", 10_000_000, 384) == "IVF4096,PQ96x4fs" == compressed_factory(384, 10_000_000)
    assert compressed_factory(30, 10_000_000) == "IVF4096,SQ8"  # no 4-dim split: 8-bit scalar codes
    assert factories.lossy("IVF4096,PQ96x4fs") and factories.lossy("IVF64,SQ8") and not factories.lossy("HNSW32")
    monkeypatch.setattr(factories, "EXACT_LIMIT", 1000)
    monkeypatch.setattr(factories, "COMPRESS_LIMIT", 3000)
    x = clustered(4000)
    index = VectorIndex.build(32, [f"d{i}" for i in range(2500)], x[:2500])
    assert index.factory == "IVF64,Flat" and not index.lossy and index.rebuild_reason() is None
    index.upsert([f"d{i}" for i in range(2500, 4000)], x[2500:])
    assert "compressed from here" in index.rebuild_reason()
    assert VectorIndex.build(32, [f"d{i}" for i in range(4000)], x).factory == f"IVF{ivf_lists(4000)},PQ8x4fs"


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
