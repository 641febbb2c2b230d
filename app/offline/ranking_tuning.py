"""The ranking chosen on relevance judgments (`fit --tune-qrels`): dense alone, lexical alone, each fusion and
weight, and the rule's with pseudo-relevance feedback, scored on lists the search service made, kept only under the
never-worse guard of the search space."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm.auto import tqdm

from app.correction.artifact import CorrectionArtifact
from app.correction.publication import write_artifact_file
from app.index.fusion import CANDIDATES, FUSIONS, Candidates, Ranking, fuse
from app.offline.retrieval import DEPTH, Judgments, read_judged_corpus
from app.offline.search_tuning import MIN_NDCG_GAIN, RECALL_TOLERANCE, SearchCandidate, keeps_every_set
from app.offline.search_tuning import ndcg_gain_lower_bound as gain_lower_bound
from app.offline.served_search import add_collection, served_services
from app.services.ranking_choice import RANKING
from app.services.search_query import SearchQuery

if TYPE_CHECKING:
    from app.core.config import Settings
    from app.index.dense_lists import DenseList
    from app.services.container import Services

WEIGHTS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
RULE = (
    f"dense unless a ranking loses no NDCG@10 and at most {100 * RECALL_TOLERANCE:g} points of Recall@100 on any "
    f"judged collection against dense alone, and its NDCG@10 gain over all judged queries has a 95% lower bound "
    f">= {100 * MIN_NDCG_GAIN:g} points; then the best such NDCG@10"
)


FEEDBACK = ((3, 1.0), (3, 0.5))  # pseudo-relevance feedback's candidates: (first results, weight)


def candidates(feedback: bool = False) -> list[Ranking]:
    """Dense, lexical, each fusion at each weight; with `feedback`, the rule's ranking with each FEEDBACK too."""
    hybrid = [Ranking("hybrid", fusion, w, "") for fusion in FUSIONS for w in WEIGHTS]
    fed = [replace(Ranking(chosen_by=""), feedback_docs=d, feedback_weight=w) for d, w in FEEDBACK] if feedback else []
    return [Ranking("dense", chosen_by=""), Ranking("lexical", chosen_by=""), *hybrid, *fed]


def feedback_key(ranking: Ranking) -> tuple[Any, ...]:
    return (ranking.feedback_docs, ranking.feedback_weight) if ranking.feedback else ()


def query_lists(services: Services, text: str, like: str | None = None) -> tuple[Candidates, DenseList, np.ndarray]:
    """A query's candidate lists as /search makes them (the dense one as its source gave it) and its vector: for its
    text, or `like` a stored document (its text and vector, itself left out)."""
    index, search = services.served.current, services.search
    if like is None:
        vector = services.embedding.in_space([text], index.search_correction)
    else:
        query = search.liked(index, SearchQuery(like=like))
        text, vector = query.words, search.mapped_vector(index, query)
    found, dense = search.candidates(index, text, vector, "hybrid", CANDIDATES, None, None, like)
    return found, dense, vector


def candidate_lists(services: Services, texts: list[str]) -> dict[tuple[Any, ...], list[Candidates]]:
    """Each query's dense and lexical candidate lists, made by the search service as /search makes them (key ());
    and for each FEEDBACK, the same with the dense list searched again after the rule's ranking (key (docs, w))."""
    index, search = services.served.current, services.search
    lists: dict[tuple[Any, ...], list[Candidates]] = {(): [], **{fb: [] for fb in FEEDBACK}}
    for text in tqdm(texts, desc="candidate lists", leave=False):
        found, dense, vector = query_lists(services, text)
        lists[()].append(found)
        for docs, weight in FEEDBACK:
            fed = replace(Ranking(), feedback_docs=docs, feedback_weight=weight)
            top = fed.feedback_from(fuse(found, fed))
            lists[(docs, weight)].append(search.feed_back(index, vector, top, found, dense, fed, CANDIDATES, None))
    return lists


def scored(ranking: Ranking, judged: list[Any]) -> SearchCandidate:
    """A ranking's NDCG@10 and Recall@100 per query on every judged collection; a collection's lists are one list of
    Candidates per query, or those keyed by feedback (`candidate_lists`)."""
    ndcg, recall = [], []
    for collection, lists in judged:
        lists = lists[feedback_key(ranking)] if isinstance(lists, dict) else lists
        column = {doc: i for i, doc in enumerate(collection.doc_ids)}
        top = np.full((len(lists), DEPTH), -1, dtype=np.int64)
        for row, found in enumerate(lists):
            own = collection.own_document(row)
            ranked = [column[d] for d, _ in fuse(found, ranking) if d != own][:DEPTH]
            top[row, : len(ranked)] = ranked
        found = Judgments.of(collection).per_query(top)
        ndcg.append(found["ndcg_at_10"])
        recall.append(found["recall_at_100"])
    return SearchCandidate(ranking.mode, asdict(ranking), 0, ndcg, recall)


def choose_ranking(judged: list[Any], tuned_on: str) -> tuple[Ranking, dict[str, Any]]:
    """The best ranking that keeps every judged collection against dense, if its pooled gain is clear."""
    scores = [(r, scored(r, judged)) for r in candidates(all(isinstance(lists, dict) for _, lists in judged))]
    dense = scores[0][1]
    kept = [(r, c) for r, c in scores[1:] if keeps_every_set(c, dense)]
    best, lower = (None, 0.0)
    if kept:
        best, candidate = max(kept, key=lambda rc: rc[1].pooled_ndcg.mean())
        lower = gain_lower_bound(candidate, dense)
    chosen = best if best is not None and lower >= MIN_NDCG_GAIN else scores[0][0]
    chosen = replace(chosen, chosen_by=f"judgments ({tuned_on}): {RULE}")
    points = dict(scores)
    record = {
        "tuned_on": tuned_on,
        "candidates": len(scores),
        "ndcg_gain_lower_bound": round(100 * lower, 2),
        "dense": [round(100 * n.mean(), 2) for n in dense.ndcg],
        "chosen": [round(100 * n.mean(), 2) for n in points[replace(chosen, chosen_by="")].ndcg],
    }
    return chosen, record


def with_tuned_ranking(settings: Settings, artifact: CorrectionArtifact, folders: list[Path]) -> CorrectionArtifact:
    """`artifact` with the ranking its judgments chose in `extra.search`: each judged collection is added to a
    service serving this artifact, and its queries' candidate lists are fused every way."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tune-ranking-", dir=settings.data_dir))
    try:
        path = write_artifact_file(artifact, work / f"{artifact.id}.npz")
        judged = []
        for n, folder in enumerate(folders):
            collection = read_judged_corpus(folder)
            services = served_services(settings, work / f"run-{n}", str(path))
            try:
                add_collection(services, collection, progress=False)
                judged.append((collection, candidate_lists(services, collection.query_texts)))
            finally:
                services.close()
        chosen, record = choose_ranking(judged, "+".join(Path(f).name for f in folders))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    search = {**artifact.extra.get("search", {}), RANKING: asdict(chosen), "ranking_selection": record}
    return replace(artifact, extra={**artifact.extra, "search": search})
