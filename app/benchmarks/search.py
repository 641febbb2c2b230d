"""`bench-search`: the service's index against exact search on the same vectors, synthetic at scale and real."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from app.backbones import build_backbone
from app.backbones.base import Backbone
from app.benchmarks.filtered import filtered_figures
from app.benchmarks.streamed import scratch_dir, streamed_build
from app.benchmarks.synthetic import GaussianMixture
from app.benchmarks.throughput import percentile
from app.core.config import Settings
from app.correction.artifact import CorrectionArtifact
from app.correction.pipeline import Correction, l2_normalize
from app.correction.publication import find_bundled
from app.index.factories import ivf_lists
from app.index.faiss_index import VectorIndex
from app.index.rerank import ExactVectors
from app.offline.datasets import corpus_sha256, read_corpus
from app.offline.encoding import encode_all
from app.offline.fit import fit_from_vectors

K = 10


@dataclass(frozen=True)
class SearchFigures:
    """What one index did on one set of vectors, against exact search."""

    name: str
    n: int
    dim: int
    index: str
    params: dict[str, Any]
    recall_at_10: float
    p50_ms: float
    p99_ms: float
    build_s: float
    memory_mb: float  # the FAISS structure, serialized
    resident_mb: float | None = None  # anonymous memory the index added to the process: FAISS and its id maps
    stored_mb: float | None = None  # the float16 vectors a compressed index re-ranks from (Redis, in the service)

    def row(self) -> str:
        resident = f", resident {self.resident_mb:,.0f} MB" if self.resident_mb is not None else ""
        return (
            f"{self.name}: n {self.n:,}, dim {self.dim}, {self.index} {self.params or ''}: "
            f"recall@10 {self.recall_at_10:.4f}, p50 {self.p50_ms:.3f} ms, p99 {self.p99_ms:.3f} ms "
            f"(one thread), build {self.build_s:.1f} s, memory {self.memory_mb:.0f} MB{resident}"
        )


def exact_neighbours(queries: np.ndarray, vectors: np.ndarray, k: int = K) -> np.ndarray:
    """Row positions of the true top-k by inner product (brute force, all cores)."""
    return faiss.knn(
        np.ascontiguousarray(queries), np.ascontiguousarray(vectors), k, metric=faiss.METRIC_INNER_PRODUCT
    )[1]


def one_thread_latencies(
    index: VectorIndex, queries: np.ndarray, k: int = K, exact: ExactVectors | None = None
) -> tuple[list[float], list[list[str]]]:
    """Each query alone, on one thread, through the same call the service makes (re-ranked from `exact`)."""
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        index.search(queries[:20], k, exact=exact)  # warm caches
        seconds, found = [], []
        for row in queries:
            start = time.perf_counter()
            (hits,) = index.search(row[None, :], k, exact=exact)
            seconds.append(time.perf_counter() - start)
            found.append([doc_id for doc_id, _ in hits])
        return seconds, found
    finally:
        faiss.omp_set_num_threads(threads)


def measure(
    name: str, vectors: np.ndarray, queries: np.ndarray, *, factory: str, recall: float, progress: bool = False
) -> SearchFigures:
    """Build the index the service would build, then recall@10 and latency against exact search."""
    ids = [str(i) for i in range(len(vectors))]
    start = time.perf_counter()
    index = VectorIndex.build(vectors.shape[1], ids, vectors, factory=factory, recall=recall, progress=progress)
    build_s = time.perf_counter() - start
    truth = exact_neighbours(queries, vectors)
    exact = (lambda keys: vectors[[int(k) for k in keys]]) if index.lossy else None  # noqa: E731
    seconds, found = one_thread_latencies(index, queries, exact=exact)
    return figures(name, index, truth, seconds, found, build_s)


def figures(
    name: str,
    index: VectorIndex,
    truth: np.ndarray,
    seconds: list[float],
    found: list[list[str]],
    build_s: float,
    **extra: Any,
) -> SearchFigures:
    """recall@10 of what was found against the exact top-10, and the timings."""
    hits = [len({str(j) for j in t} & set(f)) for t, f in zip(truth.tolist(), found, strict=True)]
    return SearchFigures(
        name=name,
        n=len(index),
        dim=index.dim,
        index=index.factory,
        params=index.searched_with,
        recall_at_10=round(sum(hits) / (K * len(truth)), 4),
        p50_ms=round(percentile(seconds, 50) * 1000, 3),
        p99_ms=round(percentile(seconds, 99) * 1000, 3),
        build_s=round(build_s, 1),
        memory_mb=round(index.memory_bytes() / 1e6, 1),
        **extra,
    )


def measure_streamed(
    mixture: GaussianMixture, n: int, asked: np.ndarray, *, work_dir: Path, **build: Any
) -> tuple[list[dict[str, Any]], SearchFigures]:
    """`n` mixture documents built a chunk at a time, never all in memory (`build`: streamed_build's factory, recall
    and progress); a compressed index re-ranks from their float16 copy on disk, as the service re-ranks from Redis.
    The filtered searches' figures (benchmarks/filtered), then the unfiltered ones."""
    with scratch_dir(work_dir) as folder:
        built = streamed_build(mixture, n, asked, work_dir=Path(folder), **build)
        index = built.vector_index
        seconds, found = one_thread_latencies(index, asked, exact=built.exact if index.lossy else None)
        filtered = filtered_figures(built, asked)
        return filtered, figures(
            "synthetic",
            index,
            built.truth,
            seconds,
            found,
            built.build_s,
            resident_mb=round(built.resident_bytes / 1e6, 1),
            stored_mb=round(built.stored.nbytes / 1e6, 1),
        )


def held_out(vectors: np.ndarray, queries: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(documents, queries): the queries are rows taken out of the documents, so none finds itself."""
    rng = np.random.default_rng(seed)
    pick = np.zeros(len(vectors), dtype=bool)
    pick[rng.choice(len(vectors), min(queries, len(vectors) // 10), replace=False)] = True
    return np.ascontiguousarray(vectors[~pick]), np.ascontiguousarray(vectors[pick])


def sts_sentences(folder: Path) -> list[str]:
    """Every distinct sentence of STS-B train, dev and test."""
    sentences: list[str] = []
    for name in ("sts-train.csv", "sts-dev.csv", "sts-test.csv"):
        sentences += read_corpus(folder / name)
    return list(dict.fromkeys(sentences))


def cached_encode(backbone: Backbone, sentences: list[str], cache_dir: Path) -> np.ndarray:
    """The backbone's raw vectors, kept in `cache_dir` under the backbone fingerprint and corpus hash."""
    path = Path(cache_dir) / f"{backbone.fingerprint}-{corpus_sha256(sentences)[:16]}.npy"
    if path.exists():
        kept: np.ndarray = np.load(path)
        if kept.shape == (len(sentences), backbone.dim):
            return kept
    vectors = encode_all(backbone, sentences, desc="encoding STS-B")
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def corrected_at(
    backbone: Backbone, sentences: list[str], raw: np.ndarray, artifact: CorrectionArtifact | None, dim: int | None
) -> tuple[np.ndarray, str]:
    """The vectors the served index holds (the correction's search space); with `dim`, the similarity
    correction refitted at `dim` output dims (same method and parameters)."""
    if artifact is None:
        if dim not in (None, backbone.dim):
            raise ValueError(f"no correction to reduce dims with: the backbone gives {backbone.dim}")
        return l2_normalize(raw), "none"
    if dim is None:
        return Correction(artifact).search.apply(raw), artifact.id
    if dim != artifact.out_dim:
        if "dim" not in artifact.params:
            raise ValueError(f"{artifact.method} keeps the backbone's {backbone.dim} dims; --dim needs whitening")
        params = {**artifact.params, "dim": dim}
        params["drop"] = min(params.get("drop", 0), backbone.dim - dim)  # at full dims, nothing is dropped
        artifact = fit_from_vectors(backbone, sentences, raw, artifact.method, params)
    return Correction(artifact).apply(raw), artifact.id


def served_vectors(settings: Settings, sts_dir: Path, dim: int | None = None) -> tuple[np.ndarray, str]:
    """Every STS-B sentence as the served index holds it (the bundled correction's search space), and its id."""
    backbone = build_backbone(settings)
    sentences = sts_sentences(sts_dir)
    raw = cached_encode(backbone, sentences, settings.data_dir / "cache")
    return corrected_at(backbone, sentences, raw, find_bundled(settings.models_dir, backbone), dim)


def run(
    settings: Settings,
    sts_dir: Path,
    *,
    n: int,
    dim: int | None,
    queries: int,
    factory: str,
    progress: bool = True,
) -> dict[str, Any]:
    """Synthetic vectors shaped like the backbone's corrected STS-B vectors at `n`, and the real ones."""
    corrected, correction_id = served_vectors(settings, sts_dir, dim)
    mixture = GaussianMixture.fit(corrected)
    asked = mixture.sample(queries, seed=2)
    filtered, synthetic = measure_streamed(
        mixture,
        n,
        asked,
        factory=factory,
        recall=settings.index_recall,
        work_dir=settings.data_dir / "bench",
        progress=progress,
    )
    real_docs, real_queries = held_out(corrected, queries)
    real = [
        measure("sts", real_docs, real_queries, factory=factory, recall=settings.index_recall),
        measure(
            "sts", real_docs, real_queries, factory=f"IVF{ivf_lists(len(real_docs))},Flat", recall=settings.index_recall
        ),
    ]
    return {
        **asdict(synthetic),
        "correction": correction_id,
        "mixture": {"components": len(mixture.weights), "fitted_on": len(corrected)},
        "real": [asdict(r) for r in real],
        "filtered": [f | {"p50_vs_unfiltered": round(f["search_p50_ms"] / synthetic.p50_ms, 2)} for f in filtered],
    }
