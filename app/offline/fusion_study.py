"""Rankings compared on one ingestion: each judged collection added once, its short queries' and its "more like this"
tasks' candidate lists made once as /search makes them, then fused every way studied and scored per query (NDCG@10,
paired bootstrap against the served one): what `compare-rankings` prints, and what a change of fusion is judged by."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from app.index.fusion import CANDIDATES, Candidates, Ranking
from app.offline.like_tasks import like_tasks
from app.offline.ranking_tuning import candidate_lists, scored
from app.offline.retrieval import JudgedCorpus, paired_interval
from app.offline.served_search import add_collection, served_services
from app.services.search_query import SearchQuery

if TYPE_CHECKING:
    from app.core.config import Settings
    from app.services.container import Services

STUDIED = {  # beside "default": the ranking the service serves, read from it
    "calibrated 0.4": Ranking("hybrid", "calibrated", 0.4, ""),
    "convex 0.4": Ranking("hybrid", "convex", 0.4, ""),
    "rrf 0.4": Ranking("hybrid", "rrf", 0.4, ""),
    "dense": Ranking("dense", chosen_by=""),
    "lexical": Ranking("lexical", chosen_by=""),
}


def like_lists(services: Services, likes: list[str]) -> list[Candidates]:
    """Each task's lists as /search makes them for `like` (the document's text and vector, itself left out)."""
    index, search = services.served.current, services.search
    lists = []
    for doc in tqdm(likes, desc="like lists", leave=False):
        query = search.liked(index, SearchQuery(like=doc))
        vector = search.mapped_vector(index, query)
        lists.append(search.candidates(index, query.words, vector, "hybrid", CANDIDATES, None, None, doc)[0])
    return lists


def compare_rankings(settings: Settings, collection: JudgedCorpus, *, tasks: int = 0) -> dict[str, Any]:
    """NDCG@10 x100 of each studied ranking on the collection's queries and (with `tasks`) that many like tasks, each
    with its change against the default as a 95% interval."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="compare-rankings-", dir=settings.data_dir))
    liked = like_tasks(collection, limit=tasks) if tasks else None
    services = served_services(settings, work)
    try:
        add_collection(services, collection, progress=False)
        served = services.search.served_ranking(services.served.current)
        rankings = {"default": Ranking(served.mode, served.fusion, served.lexical_weight, ""), **STUDIED}
        parts = {"queries": (collection, candidate_lists(services, collection.query_texts)[()])}
        if liked is not None and liked.likes:
            parts["like tasks"] = (liked, like_lists(services, liked.likes))
    finally:
        services.close()
        shutil.rmtree(work, ignore_errors=True)
    return {name: _table(judged, lists, rankings) for name, (judged, lists) in parts.items()}


def _table(collection: JudgedCorpus, lists: list[Candidates], rankings: dict[str, Ranking]) -> dict[str, Any]:
    per_query = {name: scored(ranking, [(collection, lists)]).ndcg[0] for name, ranking in rankings.items()}
    base = per_query["default"]
    table: dict[str, Any] = {"n": len(lists)}
    for name, ndcg in per_query.items():
        low, high = paired_interval(base, ndcg)
        table[name] = {
            "ndcg_at_10": round(100 * float(ndcg.mean()), 2),
            "vs_default_95": [round(100 * low, 2), round(100 * high, 2)],
        }
    return table
