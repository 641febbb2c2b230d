"""`bench-search` at a scale that does not fit in memory twice: the documents drawn a chunk at a time into the
index (as the service builds from its store), a float16 copy on disk (the stored vectors a compressed index
re-ranks from) and the exact top-10."""

from __future__ import annotations

import gc
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from app.benchmarks.synthetic import GaussianMixture
from app.core.process_memory import status_bytes
from app.index.faiss_index import VectorIndex
from app.index.streaming import ChunkedBuild, ExactTopK

CHUNK = 65_536  # vectors drawn, added and searched exactly at a time


def resident_anon_bytes() -> int:
    """This process's anonymous resident memory (heap, FAISS, Python objects; not file pages such as a memmap)."""
    return status_bytes("RssAnon") or 0


@dataclass
class StreamedBuild:
    """An index built from a mixture a chunk at a time, with what measuring it needs."""

    index: VectorIndex | None
    stored: np.ndarray  # float16 (n, d) memmap: the documents as the store keeps them
    truth: np.ndarray  # exact top-10 labels of the measured queries
    build_s: float  # training, adding and calibrating; not drawing the vectors nor the exact search
    resident_bytes: int  # anonymous memory the index (FAISS structure and id maps) added to this process

    @property
    def vector_index(self) -> VectorIndex:
        """The index, once built."""
        if self.index is None:
            raise RuntimeError("measured before it was built")
        return self.index

    def exact(self, keys: Sequence[str]) -> np.ndarray:
        """Index keys -> their stored vectors as float32: what the service reads from Redis to re-rank."""
        return self.rows(np.fromiter((int(k) for k in keys), dtype=np.int64, count=len(keys)))

    def rows(self, labels: np.ndarray) -> np.ndarray:
        return np.asarray(self.stored[labels], dtype=np.float32)


def streamed_build(
    mixture: GaussianMixture,
    n: int,
    asked: np.ndarray,
    *,
    factory: str,
    recall: float,
    work_dir: Path,
    progress: bool = True,
) -> StreamedBuild:
    """Draw n documents in chunks into the index the service builds from its store (`ChunkedBuild`), a float16
    copy on disk and the exact top-10 of `asked`; a compressed index calibrates its re-rank on the copy."""
    exact = ExactTopK(np.ascontiguousarray(asked))
    stored = np.lib.format.open_memmap(work_dir / "stored.npy", mode="w+", dtype=np.float16, shape=(n, mixture.dim))
    built = StreamedBuild(None, stored, exact.labels, 0.0, 0)
    gc.collect()
    before, build_s, start = resident_anon_bytes(), 0.0, 0
    filling = ChunkedBuild(mixture.dim, n, factory=factory, recall=recall)
    with tqdm(total=n, desc="index, store, exact", unit="vec", disable=not progress) as bar:
        for block in mixture.chunks(n, seed=1, chunk=CHUNK):
            began = time.perf_counter()
            filling.add([str(i) for i in range(start, start + len(block))], block)
            build_s += time.perf_counter() - began
            stored[start : start + len(block)] = block
            exact.add(block, start)
            start += len(block)
            bar.update(len(block))
    stored.flush()
    began = time.perf_counter()
    built.index = filling.finish(built.exact)
    built.build_s = round(build_s + time.perf_counter() - began, 1)
    built.truth = exact.labels
    del block, filling
    gc.collect()
    built.resident_bytes = resident_anon_bytes() - before
    return built


def scratch_dir(parent: Path) -> tempfile.TemporaryDirectory[str]:
    """Where the float16 copy goes (n x d x 2 bytes: 7.7 GB at 10M x 384), removed afterwards."""
    Path(parent).mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(prefix="bench-search-", dir=parent)
