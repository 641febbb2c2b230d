"""A judged collection searched exactly as /search searches it: its documents added through the document service
(passages, both indexes) on a Redis of its own, each query through the search service in a given mode."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm.auto import tqdm

from app.core.config import Settings
from app.offline.retrieval import DEPTH, METRICS, JudgedCorpus, Judgments, paired_interval
from app.services.documents import DocumentInput
from app.services.search_query import SearchQuery

if TYPE_CHECKING:
    from app.services.container import Services

ADD_BATCH = 256
MODES = ("dense", "lexical", "hybrid", "served")


def served_services(settings: Settings, folder: Path, correction: str | None = None) -> Services:
    """Services on the settings' backbone (its ONNX export cached where it always is) with a Redis and an index
    folder of their own under `folder`, so a running server's data is never touched."""
    from app.correction.publication import resolve_correction
    from app.engine.pool import engine_for
    from app.services.container import Services
    from app.store.embedded import EmbeddedRedis
    from app.store.redis_store import RedisStore

    engine = engine_for(settings)
    embedded = EmbeddedRedis(folder / "redis")
    store = RedisStore.from_url(embedded.start(), prefix=settings.key_prefix)
    run = settings.model_copy(
        update={
            "data_dir": folder,
            "redis_url": None,
            "max_text_chars": 10**8,
            "max_texts": ADD_BATCH,
            "max_k": max(settings.max_k, DEPTH + 1),
            "snapshot_interval": 1e9,
        }
    )
    artifact = resolve_correction(correction or settings.correction, store, engine.backbone, settings.models_dir)
    return Services(run, engine, store, artifact, embedded=embedded)


def add_collection(services: Services, collection: JudgedCorpus, *, progress: bool = True) -> float:
    """Add the collection's documents through the document service, as POST /documents does; the seconds it took."""
    docs = [DocumentInput(text=t, id=d) for d, t in zip(collection.doc_ids, collection.doc_texts, strict=True)]
    started = time.perf_counter()
    with tqdm(total=len(docs), desc="adding documents", unit="doc", disable=not progress) as bar:
        for start in range(0, len(docs), ADD_BATCH):
            services.documents.add(docs[start : start + ADD_BATCH])
            bar.update(len(docs[start : start + ADD_BATCH]))
    return time.perf_counter() - started


def search_served(
    services: Services, collection: JudgedCorpus, modes: list[str | None], *, progress: bool = True
) -> dict[str | None, tuple[np.ndarray, Any]]:
    """Each mode's ranked document columns (queries x DEPTH, -1 past the end) and the ranking that made them."""
    column = {doc_id: i for i, doc_id in enumerate(collection.doc_ids)}
    depth = min(DEPTH, len(collection.doc_ids))
    found: dict[str | None, tuple[np.ndarray, Any]] = {}
    for mode in modes:
        top = np.full((len(collection.query_texts), depth), -1, dtype=np.int64)
        ranking = None
        for row, query in enumerate(
            tqdm(collection.query_texts, desc=f"searching ({mode or 'served'})", disable=not progress)
        ):
            like, own = collection.likes[row] if collection.likes else None, collection.own_document(row)
            asked = depth + (own is not None and like is None)  # its own document found too: judged out
            result = services.search.search(SearchQuery(None if like else query, asked, mode=mode, like=like))
            hits, ranking = [h for h in result.hits if h.id != own][:depth], result.ranking
            top[row, : len(hits)] = [column[h.id] for h in hits]
        found[mode] = (top, ranking)
    return found


def evaluate_served(
    settings: Settings, collection: JudgedCorpus, mode: str, *, correction: str | None = None
) -> dict[str, Any]:
    """The mode's NDCG@10, Recall@100 and MRR@10 (x100) against dense alone on the same service (`raw_*`), each
    change with a paired-bootstrap 95% interval; `served` is whatever /search does when a request names no mode."""
    if mode not in MODES:
        raise ValueError(f"--mode is one of {', '.join(MODES)}, got {mode!r}")
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="eval-search-", dir=settings.data_dir))
    services = served_services(settings, folder, correction)
    try:
        asked = None if mode == "served" else mode
        seconds = add_collection(services, collection)
        found = search_served(services, collection, ["dense", asked] if asked != "dense" else ["dense"])
        index = services.served.current
        passages = len(index.dense)
        ingestion = {
            "seconds": round(seconds, 1),
            "docs_per_s": round(index.documents / seconds, 1),
            "passages_per_s": round(passages / seconds, 1),
            "index_bytes": index.dense.memory_bytes(),
            "lexical_bytes": index.lexical.size_bytes() if index.lexical else 0,
        }
        correction_id = services.correction.id if services.correction else None
    finally:
        services.close()
        shutil.rmtree(folder, ignore_errors=True)
    judgments = Judgments.of(collection)
    dense = judgments.per_query(found["dense"][0])
    mine = judgments.per_query(found[asked][0])
    figures: dict[str, Any] = {
        "mode": mode,
        "ranking": found[asked][1],
        "correction": correction_id,
        "passages": passages,
        "ingestion": ingestion,
        "n_queries": len(collection.query_ids),
        "n_docs": len(collection.doc_ids),
    }
    for metric in METRICS:
        low, high = paired_interval(dense[metric], mine[metric])
        figures[f"raw_{metric}"] = round(100 * dense[metric].mean(), 2)
        figures[metric] = round(100 * mine[metric].mean(), 2)
        figures[f"{metric}_change_95"] = [round(100 * low, 2), round(100 * high, 2)]
    return figures
