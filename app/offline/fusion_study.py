"""Rankings compared on one ingestion: each judged collection added once, the candidate lists of its short queries,
of its "more like this" tasks and of the same tasks' texts sent as long queries made once as /search makes them, then
fused every way studied, with feedback in each form studied, and scored per query (NDCG@10, paired bootstrap against
the served one): what `compare-rankings` prints, and what a change of fusion or of feedback is judged by."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm.auto import tqdm

from app.index.fusion import CANDIDATES, LIKE_FEEDBACK, Candidates, Ranking, fuse
from app.offline.like_tasks import like_tasks
from app.offline.ranking_tuning import query_lists, scored
from app.offline.retrieval import JudgedCorpus, paired_interval
from app.offline.served_search import add_collection, served_services

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
UNREAD = "calibrated 0.7, near copy unread"  # the default before it read past a near copy of the query
FED = LIKE_FEEDBACK  # feedback's studied size: first documents, weight
SERVED_FORM = "feedback: passages, after fusion"  # the form /search feeds back in
FORMS = {  # feedback's forms: whose first documents feed back (a fusion, or None: the dense list's) and whether
    SERVED_FORM: ("default", False),  # their whole documents' mean passage moves the query, or their best passages
    "feedback: documents, after fusion": ("default", True),
    "feedback: passages, before fusion": (None, False),
    "feedback: documents, before fusion": (None, True),
    "convex 0.4, feedback: passages": ("convex", False),
    "convex 0.4, feedback: documents": ("convex", True),
}


def unread(lists: list[Candidates]) -> list[Candidates]:
    """The lists without the collection's range of cosines: no document is then a near copy (`Candidates.near_copy`),
    as before the default fusion read past one."""
    return [replace(found, dense_range=None) for found in lists]


def form_rankings(served: Ranking) -> dict[str, Ranking]:
    """The ranking each feedback form fuses with (the served one's or convex 0.4's), feeding back FED."""
    fusions = {"default": replace(served, chosen_by=""), "convex": STUDIED["convex 0.4"], None: served}
    return {
        name: replace(fusions[fusion], feedback_docs=FED[0], feedback_weight=FED[1])
        for name, (fusion, _) in FORMS.items()
    }


def studied_lists(
    services: Services, served: Ranking, texts: list[str], likes: list[str] | None = None
) -> dict[str, list[Candidates]]:
    """Each query's lists as /search makes them (key "") and, for each feedback form, with the dense list searched
    again from that form's first documents (key: the form)."""
    index, search = services.served.current, services.search
    rankings = form_rankings(served)
    lists: dict[str, list[Candidates]] = {"": [], **{name: [] for name in FORMS}}
    for row, text in enumerate(tqdm(texts, desc="candidate lists", leave=False)):
        like = likes[row] if likes else None
        found, dense, vector = query_lists(services, text, like)
        lists[""].append(found)
        for name, (fusion, documents) in FORMS.items():
            ranking = rankings[name]
            top = ranking.feedback_from(fuse(found, ranking) if fusion else found.dense)
            again = search.feed_back(
                index, vector, top, found, dense, ranking, CANDIDATES, None, like, documents=documents
            )
            lists[name].append(again)
    return lists


def compare_rankings(settings: Settings, collection: JudgedCorpus, *, tasks: int = 0) -> dict[str, Any]:
    """NDCG@10 x100 of each studied ranking and feedback form on the collection's queries and (with `tasks`) that
    many like tasks and as many long queries (each task's document's text as q, the document judged out), each with
    its change against the default (what /search serves such a query) as a 95% interval."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="compare-rankings-", dir=settings.data_dir))
    services = served_services(settings, work)
    try:
        add_collection(services, collection, progress=False)
        index, search = services.served.current, services.search
        served, like_served = search.served_ranking(index), search.served_ranking(index, like=True)
        parts = {"queries": (collection, served, studied_lists(services, served, collection.query_texts))}
        liked = like_tasks(collection, limit=tasks) if tasks else None
        if liked is not None and liked.likes:
            pasted = like_tasks(collection, limit=tasks, as_text=True)
            parts["like tasks"] = (liked, like_served, studied_lists(services, served, liked.query_texts, liked.likes))
            parts["long queries"] = (pasted, served, studied_lists(services, served, pasted.query_texts))
    finally:
        services.close()
        shutil.rmtree(work, ignore_errors=True)
    return {name: _table(judged, default, lists) for name, (judged, default, lists) in parts.items()}


def _table(collection: JudgedCorpus, default: Ranking, lists: dict[str, list[Candidates]]) -> dict[str, Any]:
    def ndcg(ranking: Ranking, found: list[Candidates]) -> np.ndarray:
        return scored(ranking, [(collection, found)]).ndcg[0]

    if default.feedback and (default.feedback_docs, default.feedback_weight) != FED:
        raise ValueError(f"the served feedback {default.feedback} is not a studied form's ({FED})")
    per_query = {"default": ndcg(default, lists[SERVED_FORM if default.feedback else ""])}
    per_query |= {name: ndcg(ranking, lists[""]) for name, ranking in STUDIED.items()}
    per_query[UNREAD] = ndcg(Ranking("hybrid", "calibrated", 0.7, ""), unread(lists[""]))
    plain = replace(default, feedback_docs=0)
    per_query |= {name: ndcg(ranking, lists[name]) for name, ranking in form_rankings(plain).items()}
    per_query["default, no feedback"] = ndcg(plain, lists[""])
    base = per_query["default"]
    table: dict[str, Any] = {"n": len(lists[""])}
    for name, found in per_query.items():
        low, high = paired_interval(base, found)
        table[name] = {
            "ndcg_at_10": round(100 * float(found.mean()), 2),
            "vs_default_95": [round(100 * low, 2), round(100 * high, 2)],
        }
    return table
