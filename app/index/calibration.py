"""How deep an approximate index searches: its knob (nprobe, efSearch), set to the smallest value that reaches a
recall target against exact search on sampled documents."""

from __future__ import annotations

import faiss
import numpy as np

from app.index.factories import inner_index

CALIBRATION_QUERIES = 256
RECALL_MARGIN = 0.01  # calibrate a little above the target: calibration queries are documents, not new text
PROBES = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
EF_SEARCH = (16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)


def search_knob(index: faiss.Index) -> str | None:
    """The parameter that trades recall for speed: nprobe (IVF), efSearch (HNSW), or none (exact)."""
    base = inner_index(index)
    return "nprobe" if isinstance(base, faiss.IndexIVF) else "efSearch" if isinstance(base, faiss.IndexHNSW) else None


def search_parameters(index: faiss.Index, params: dict[str, int], selector=None, *, boost: bool = False):
    """FAISS search parameters at the calibrated depth; `boost` searches every list (or 8x as wide a beam), for a
    narrow filter that left too few results."""
    base = inner_index(index)
    knob = search_knob(index)
    if knob == "nprobe":
        nprobe = base.nlist if boost else params.get("nprobe", base.nprobe)
        return faiss.SearchParametersIVF(sel=selector, nprobe=int(nprobe))
    if knob == "efSearch":
        ef = max(params.get("efSearch", base.hnsw.efSearch), 16)
        return faiss.SearchParametersHNSW(sel=selector, efSearch=int(ef * 8 if boost else ef))
    return faiss.SearchParameters(sel=selector) if selector is not None else None


def calibrate(index: faiss.Index, vectors: np.ndarray, recall: float, *, seed: int = 0) -> dict[str, int]:
    """Smallest nprobe / efSearch whose recall@10 on sampled `vectors` (labels 0..n-1 in `index`) reaches the
    target (+ margin); {} for an exact index."""
    knob = search_knob(index)
    if knob is None or len(vectors) <= 11:
        return {}
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(vectors), min(CALIBRATION_QUERIES, len(vectors)), replace=False)
    queries = np.ascontiguousarray(vectors[pick])
    _, exact = faiss.knn(queries, vectors, 11, metric=faiss.METRIC_INNER_PRODUCT)
    truth = [[j for j in row if j != q][:10] for q, row in zip(pick.tolist(), exact.tolist(), strict=True)]
    values = [p for p in PROBES if p <= inner_index(index).nlist] if knob == "nprobe" else list(EF_SEARCH)
    params: dict[str, int] = {}
    for value in values:
        params = {knob: value}
        labels = index.search(queries, 11, params=search_parameters(index, params))[1]
        found = [[j for j in row if j != q][:10] for q, row in zip(pick.tolist(), labels.tolist(), strict=True)]
        reached = np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth, strict=True)])
        if reached >= recall + RECALL_MARGIN:
            break
    return params
