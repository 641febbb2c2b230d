"""The ranking chosen on judgments sent over HTTP (`tune --collection`): each judged query's candidate lists made by
the collection's search service, every ranking scored on two thirds of the queries under the never-worse guard
against dense, and the choice published only if, on the held-out third, it is no worse than the default ranking."""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, replace

import numpy as np

from app.index.fusion import CANDIDATES, Candidates, Ranking
from app.offline.ranking_tuning import RULE, choose_ranking, scored
from app.offline.retrieval import JudgedCorpus

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


def judged_part(qrels: dict[str, dict[str, int]], lists: dict[str, Candidates], queries: list[str]):
    """A judged corpus of `queries` over the documents their lists and judgments name, with their lists."""
    docs = sorted({d for q in queries for d in qrels[q]} | {d for q in queries for d, _ in lists[q].dense}
                  | {d for q in queries for d, _ in lists[q].lexical})  # fmt: skip
    corpus = JudgedCorpus(docs, [""] * len(docs), queries, queries, {q: qrels[q] for q in queries})
    return corpus, [lists[q] for q in queries]


def tune(search, qrels: dict[str, dict[str, int]], default: Ranking) -> dict:
    """Choose on the tuning part, decide on the held-out part; `search(query) -> Candidates`. The record says what
    was chosen, its figures, and whether it is published."""
    if len(qrels) < MIN_QUERIES:
        raise ValueError(f"{len(qrels)} judged queries with a relevant document; tuning needs {MIN_QUERIES}")
    lists = {q: search(q) for q in qrels}
    tuning = [q for q in qrels if not held_out(q)]
    deciding = [q for q in qrels if held_out(q)]
    if not tuning or not deciding:  # a handful of queries all on one side of the hash
        tuning, deciding = list(qrels)[: len(qrels) * 2 // 3], list(qrels)[len(qrels) * 2 // 3 :]
    chosen, record = choose_ranking([judged_part(qrels, lists, tuning)], f"{len(tuning)} judged queries over HTTP")
    part = [judged_part(qrels, lists, deciding)]
    mine, theirs = scored(chosen, part), scored(default, part)
    figures = {name: {"ndcg_at_10": round(100 * float(np.mean(c.ndcg[0])), 2),
                      "recall_at_100": round(100 * float(np.mean(c.recall[0])), 2)}
               for name, c in (("chosen", mine), ("default", theirs))}  # fmt: skip
    kept = figures["chosen"]["ndcg_at_10"] >= figures["default"]["ndcg_at_10"]
    chosen = replace(chosen, chosen_by=f"judgments over HTTP ({len(qrels)} queries, {len(deciding)} held out): "
                     f"{RULE}; published only when no worse than the default on the held-out ones")  # fmt: skip
    return {
        "ranking": asdict(chosen),
        "published": kept,
        "reason": "no worse than the default on the held-out queries" if kept
        else "below the default on the held-out queries: the default stays",
        "queries": {"tuning": len(tuning), "held_out": len(deciding)},
        "held_out": figures,
        "selection": record,
        "candidates": CANDIDATES,
        "at": round(time.time(), 3),
    }  # fmt: skip
