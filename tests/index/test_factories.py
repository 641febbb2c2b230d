"""Which index structure for how many vectors: exact while small, IVF beyond, codes past the limit; rebuilt when
it no longer fits."""

from app.index import VectorIndex, factories
from app.index.factories import compressed_factory, ivf_lists, resolve_factory
from tests.index.test_faiss_index import clustered


def test_auto_is_exact_while_small_and_ivf_beyond_the_limit(monkeypatch):
    assert resolve_factory("auto", 10, 384) == "Flat"
    assert resolve_factory("HNSW32", 10, 384) == "HNSW32"
    assert resolve_factory("auto", 1_000_000, 384) == "IVF4096,Flat" and ivf_lists(1_000_000) == 4096
    monkeypatch.setattr(factories, "EXACT_LIMIT", 1000)
    x = clustered(3000)
    small = VectorIndex.build(32, [f"d{i}" for i in range(500)], x[:500])
    assert small.factory == "Flat" and small.rebuild_reason() is None
    small.upsert([f"d{i}" for i in range(500, 3000)], x[500:])
    assert "exact-search limit" in small.rebuild_reason()
    big = VectorIndex.build(32, [f"d{i}" for i in range(3000)], x)
    assert big.factory.startswith("IVF") and big.rebuild_reason() is None


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
