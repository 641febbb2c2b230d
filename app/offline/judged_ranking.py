"""The search space and the ranking chosen on judgments sent over HTTP (`tune --collection`): two thirds of the
judged queries choose, each by the rule `fit --tune-qrels` applies (the space among the correction's family, scored
by exact search over the stored vectors; the ranking among dense, lexical and each fusion, on candidate lists the
collection's search service makes), and each choice is published only if, on the held-out third, it is no worse
than what the collection serves."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

import numpy as np

from app.correction.artifact import CorrectionArtifact
from app.correction.pipeline import Correction, project
from app.index.fusion import CANDIDATES, Candidates, Ranking
from app.offline.fit import with_search_space
from app.offline.ranking_tuning import FEEDBACK, RULE, choose_ranking, scored
from app.offline.retrieval import JudgedCorpus, Judgments, exact_top
from app.offline.search_tuning import JudgedSet, keeps_every_set

JudgedPart = tuple[JudgedCorpus, list[Candidates]]  # queries judged over the documents their lists name, and the lists

MIN_QUERIES = 6  # judged queries with a relevant document: at least two held out


def judged_queries(judgments: list[tuple[str, str, int]]) -> dict[str, dict[str, int]]:
    """query -> {document id: grade > 0}; queries without a relevant document are left out (nothing to find)."""
    found: dict[str, dict[str, int]] = {}
    for query, doc_id, grade in judgments:
        if grade > 0:
            found.setdefault(query, {})[doc_id] = grade
    return found


def held_out(query: str) -> bool:
    """A third of the queries, the same on every run and replica: the part that decides."""
    return hashlib.blake2b(query.encode(), digest_size=8).digest()[0] % 3 == 0


def split(qrels: dict[str, dict[str, int]]) -> tuple[list[str], list[str]]:
    """The queries that choose and those held out to decide (two thirds and a third, by hash; by order if the hash
    put every query on one side)."""
    if len(qrels) < MIN_QUERIES:
        raise ValueError(f"{len(qrels)} judged queries with a relevant document; tuning needs {MIN_QUERIES}")
    tuning, deciding = [q for q in qrels if not held_out(q)], [q for q in qrels if held_out(q)]
    if not tuning or not deciding:
        tuning, deciding = list(qrels)[: len(qrels) * 2 // 3], list(qrels)[len(qrels) * 2 // 3 :]
    return tuning, deciding


def tune_space(
    artifact: CorrectionArtifact,
    doc_ids: list[str],
    docs: np.ndarray,
    queries: dict[str, np.ndarray],
    qrels: dict[str, dict[str, int]],
) -> tuple[CorrectionArtifact | None, dict[str, Any]]:
    """The served correction with the search space the tuning queries choose (exact search over the stored raw
    vectors `docs`, `queries` raw too), when it differs from the served one and the held-out queries find it no
    worse (NDCG@10); else None. And the record of both spaces' held-out figures."""
    tuning, deciding = split(qrels)

    def judged(names: list[str]) -> JudgedSet:
        corpus = JudgedCorpus(doc_ids, [""] * len(doc_ids), names, names, {q: qrels[q] for q in names})
        return JudgedSet(
            "judgments over HTTP", corpus, docs, np.stack([queries[q] for q in names]), Judgments.of(corpus)
        )

    def held_out_ndcg(candidate: CorrectionArtifact) -> float:
        space, part = Correction(candidate).search, judged(deciding)
        top = exact_top(project(part.queries, space), project(part.docs, space))
        return round(100 * float(part.judgments.per_query(top)["ndcg_at_10"].mean()), 2)

    chosen = with_search_space(artifact, docs, [judged(tuning)])
    keys = ("shared_with_similarity", "method", "params", "dim")
    described = {k: chosen.extra["search"].get(k) for k in keys}
    served = {k: artifact.extra.get("search", {}).get(k) for k in keys}
    figures = {"chosen": held_out_ndcg(chosen), "served": held_out_ndcg(artifact)}
    kept = described != served and figures["chosen"] >= figures["served"]
    record = {
        "chosen": described,
        "served": served,
        "held_out_ndcg_at_10": figures,
        "published": kept,
        "reason": "the served space"
        if described == served
        else "no worse than the served space on the held-out queries"
        if kept
        else "below the served space on the held-out queries",
    }
    return (chosen if kept else None), record


def judged_part(qrels: dict[str, dict[str, int]], lists: dict[str, Candidates], queries: list[str]) -> JudgedPart:
    """A judged corpus of `queries` over the documents their lists and judgments name, with their lists."""
    docs = sorted(
        {d for q in queries for d in qrels[q]}
        | {d for q in queries for d, _ in lists[q].dense}
        | {d for q in queries for d, _ in lists[q].lexical}
    )
    corpus = JudgedCorpus(docs, [""] * len(docs), queries, queries, {q: qrels[q] for q in queries})
    return corpus, [lists[q] for q in queries]


def with_feedback(
    chosen: Ranking, part: Callable[[Ranking, list[str]], JudgedPart], tuning: list[str]
) -> tuple[Ranking, dict[str, Any]]:
    """`chosen` with the feedback candidate that keeps every judged set against it and gains most on the tuning
    queries (the never-worse guard of the rankings), else `chosen` as it is; and what each scored."""
    base = scored(chosen, [part(chosen, tuning)])
    best, best_ndcg, tried = chosen, float(base.pooled_ndcg.mean()), {}
    for docs, weight in FEEDBACK:
        candidate = replace(chosen, feedback_docs=docs, feedback_weight=weight)
        got = scored(candidate, [part(candidate, tuning)])
        ndcg = float(got.pooled_ndcg.mean())
        tried[f"{docs}x{weight:g}"] = round(100 * ndcg, 2)
        if keeps_every_set(got, base) and ndcg > best_ndcg:
            best, best_ndcg = candidate, ndcg
    return best, {"without": round(100 * float(base.pooled_ndcg.mean()), 2), "with": tried, "chosen": best.feedback}


def tune(
    search: Callable[[str, Ranking], Candidates], qrels: dict[str, dict[str, int]], default: Ranking
) -> dict[str, Any]:
    """Choose on the tuning part, decide on the held-out part; `search(query, ranking) -> Candidates` (its dense list
    searched again with the ranking's feedback, if any). The record says what was chosen, its figures, and whether
    it is published."""
    tuning, deciding = split(qrels)
    cache: dict[tuple[Any, ...], dict[str, Candidates]] = {}

    def lists_for(ranking: Ranking) -> dict[str, Candidates]:
        key: tuple[Any, ...] = (
            (ranking.fusion, ranking.lexical_weight, ranking.mode, ranking.feedback_docs, ranking.feedback_weight)
            if ranking.feedback_docs
            else ()
        )  # without feedback every ranking fuses the same lists
        if key not in cache:
            cache[key] = {q: search(q, ranking) for q in qrels}
        return cache[key]

    def part(ranking: Ranking, queries: list[str]) -> JudgedPart:
        return judged_part(qrels, lists_for(ranking), queries)

    plain = Ranking(mode="hybrid", chosen_by="")
    chosen, record = choose_ranking([part(plain, tuning)], f"{len(tuning)} judged queries over HTTP")
    if chosen.mode != "lexical":
        chosen, record["feedback"] = with_feedback(chosen, part, tuning)
    mine, theirs = scored(chosen, [part(chosen, deciding)]), scored(default, [part(default, deciding)])
    figures = {
        name: {
            "ndcg_at_10": round(100 * float(np.mean(c.ndcg[0])), 2),
            "recall_at_100": round(100 * float(np.mean(c.recall[0])), 2),
        }
        for name, c in (("chosen", mine), ("default", theirs))
    }
    kept = figures["chosen"]["ndcg_at_10"] >= figures["default"]["ndcg_at_10"]
    chosen = replace(
        chosen,
        chosen_by=f"judgments over HTTP ({len(qrels)} queries, {len(deciding)} held out): "
        f"{RULE}; published only when no worse than the default on the held-out ones",
    )
    return {
        "ranking": asdict(chosen),
        "published": kept,
        "reason": "no worse than the default on the held-out queries"
        if kept
        else "below the default on the held-out queries: the default stays",
        "queries": {"tuning": len(tuning), "held_out": len(deciding)},
        "held_out": figures,
        "selection": record,
        "candidates": CANDIDATES,
        "at": round(time.time(), 3),
    }
