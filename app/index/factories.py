"""FAISS factory strings: which structure to build for how many vectors, and the structure itself."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence

import faiss
import numpy as np

from app.index.factory_grammar import parse_factory

EXACT_LIMIT = 20_000  # `auto`: exact search below this many vectors (about 2 ms a query at 256 dims, one core)
COMPRESS_LIMIT = 2_000_000  # `auto`: full vectors in the lists up to this many (3 GB at 384 dims), codes beyond
MAX_LISTS = 4096  # training more lists, and assigning every vector to one, takes tens of minutes on two cores
RETRAIN_GROWTH = 4.0  # `auto`: retrain an IVF index once it holds this many times what it was trained on
DEAD_SHARE = 0.25  # rebuild an index that cannot delete in place once this share of it is tombstones


def ivf_lists(n: int) -> int:
    """About 4 sqrt(n) inverted lists, a power of two, with enough vectors to train each one."""
    lists = 2 ** round(math.log2(max(4 * math.sqrt(max(n, 1)), 1)))
    return int(max(1, min(lists, MAX_LISTS, n // 39 if n >= 39 else 1)))


def compressed_factory(dim: int, n: int) -> str:
    """IVF over 4-bit product-quantizer codes, one per 4 dims (d/8 bytes a vector, scanned with SIMD tables:
    FastScan), else 8-bit scalar codes; its candidates are re-scored exactly from the stored vectors. Measured on
    1M mixture vectors at 384 dims, re-ranking 100 at nprobe 32: recall@10 0.970 at 0.42 ms; PQ48 (8-bit) 0.976 at
    0.51 ms and OPQ48 0.988 at 0.56 ms, but OPQ trains 5x as long."""
    return f"IVF{ivf_lists(n)},PQ{dim // 4}x4fs" if dim % 4 == 0 else f"IVF{ivf_lists(n)},SQ8"


def resolve_factory(factory: str, n: int, dim: int) -> str:
    """`auto`: exact `Flat` while small, an IVF index of full vectors sized for `n` beyond EXACT_LIMIT, compressed
    codes beyond COMPRESS_LIMIT; else as given."""
    if factory != "auto":
        return factory
    if n < EXACT_LIMIT:
        return "Flat"
    return f"IVF{ivf_lists(n)},Flat" if n <= COMPRESS_LIMIT else compressed_factory(dim, n)


def lossy(factory: str) -> bool:
    """The structure keeps codes, not the vectors: its scores are approximate, so its candidates are re-scored."""
    return re.search(r"PQ|SQ|RQ|LSH", factory) is not None


@functools.lru_cache(maxsize=64)
def training_minimum(dim: int, factory: str) -> int:
    """Vectors the factory's structure must be trained on before it holds any: an IVF's lists, a product
    quantizer's 2^bits centroids; 0 for one that needs no training (Flat, HNSW)."""
    parse_factory(factory)  # the wall in front of FAISS: nothing outside the grammar reaches it
    probe = faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
    if probe.is_trained:
        return 0
    ivf = faiss.try_extract_index_ivf(probe)
    bits = [int(b) for b in re.findall(r"PQ\d+(?:x(\d+))?", factory) if b] or ([8] if "PQ" in factory else [])
    return int(max([ivf.nlist if ivf is not None else 1, *(2**b for b in bits)]))


def servable_factory(dim: int, factory: str, n: int) -> str:
    """What to build for `n` vectors: the factory (`auto` resolved), or exact Flat while they are too few to
    train it (an empty collection on IVF4096,Flat serves exactly, then is rebuilt once it can be trained)."""
    resolved = resolve_factory(factory, n, dim)
    return resolved if n >= training_minimum(dim, resolved) else "Flat"


def check_factory(dim: int, factory: str) -> None:
    """Raise ValueError, with the reason, for a factory string the service cannot serve: one outside the grammar it
    owns (FAISS itself aborts the process on some strings it parses), or one that cannot hold vectors of `dim`."""
    form = parse_factory(factory)
    form.check_dim(dim)
    if factory == "auto":
        return
    index = new_faiss_index(dim, factory)
    if index.is_trained:  # one that needs training is tried when it has been (below that it serves exactly)
        index.add_with_ids(np.ones((1, dim), dtype=np.float32), np.array([0], dtype=np.int64))
        index.search(np.ones((1, dim), dtype=np.float32), 1)


def new_faiss_index(dim: int, factory: str) -> faiss.Index:
    """The FAISS structure for a factory string, taking our int64 labels as ids.

    IVF stores ids itself and removes by them; the others get an IndexIDMap (whose own removal
    assumes the inner index renumbers like Flat does, which is why IVF must not be wrapped).
    """
    parse_factory(factory)  # the wall in front of FAISS: nothing outside the grammar reaches it
    base = faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
    if isinstance(base, faiss.IndexIVFPQ):
        # Polysemous codes serve Hamming-filtered search, which is never asked for here; training them took 77 s
        # for IVF1,PQ96 on 300 vectors at 384 dims (0.06 s without), on the writer's thread.
        base.do_polysemous_training = False
    return with_direct_map(base) if isinstance(base, faiss.IndexIVF) else faiss.IndexIDMap(base)


def with_direct_map(index: faiss.Index) -> faiss.Index:
    """An IVF index that finds a vector by its id (a hash table): what scoring a filter's few documents exactly
    reconstructs them from (index/filtered_search); its removals then go by an id array."""
    fast_scan = isinstance(index, faiss.IndexIVFFastScan)  # its blocked lists remove nothing by a hash table
    if isinstance(index, faiss.IndexIVF) and not fast_scan and index.direct_map.type != faiss.DirectMap.Hashtable:
        index.set_direct_map_type(faiss.DirectMap.Hashtable)
    return index


def id_selector(index: faiss.Index, labels: Sequence[int] | np.ndarray) -> faiss.IDSelector:
    """The selector a removal takes: an id array for an IVF index with a hash table of ids (the only one it takes),
    else a hashed batch (an array is searched end to end for each vector a list holds)."""
    hashed = isinstance(index, faiss.IndexIVF) and index.direct_map.type == faiss.DirectMap.Hashtable
    kind = faiss.IDSelectorArray if hashed else faiss.IDSelectorBatch
    return kind(np.asarray(labels, dtype=np.int64))


def inner_index(index: faiss.Index) -> faiss.Index:
    """The index doing the work, under an IndexIDMap if there is one."""
    index = faiss.downcast_index(index)
    return faiss.downcast_index(index.index) if isinstance(index, faiss.IndexIDMap) else index


def rebuild_reason(requested: str, factory: str, dim: int, size: int, dead: int, trained_size: int) -> str | None:
    """Why an index of `factory` (asked for as `requested`) holding `size` vectors and `dead` tombstones should be
    rebuilt from the store now, or None."""
    if dead > DEAD_SHARE * max(size + dead, 1):
        return f"{dead} tombstones"
    if requested != "auto" and factory == "Flat" and servable_factory(dim, requested, size) != "Flat":
        return f"{size} vectors: enough to train {servable_factory(dim, requested, size)}"
    if requested == "auto":
        if resolve_factory("auto", size, dim).startswith("IVF") and factory == "Flat":
            return f"{size} vectors: past the exact-search limit {EXACT_LIMIT}"
        if size > COMPRESS_LIMIT and not lossy(factory):
            return f"{size} vectors: past {COMPRESS_LIMIT} kept whole, compressed from here"
        if factory.startswith("IVF") and size > RETRAIN_GROWTH * max(trained_size, 1):
            return f"{size} vectors: {RETRAIN_GROWTH:g}x what the lists were trained on"
    return None


TRAIN_PER_LIST = 64  # vectors an IVF list is trained on (at least 10,000 in all)


def train(index: faiss.Index, vectors: np.ndarray, seed: int) -> None:
    """Train on a sample of `vectors` sized for the structure's lists."""
    lists = getattr(inner_index(index), "nlist", 1)
    take = min(len(vectors), max(lists * TRAIN_PER_LIST, 10_000))
    rng = np.random.default_rng(seed)
    index.train(vectors if take == len(vectors) else vectors[np.sort(rng.choice(len(vectors), take, replace=False))])


def deletes_in_place(index: faiss.Index) -> bool:
    """Whether this FAISS structure removes in place (asked by removing label -1, which no vector has)."""
    try:
        index.remove_ids(id_selector(index, [-1]))
        return True
    except RuntimeError:
        return False
