"""Long queries from short-query collections: "more like this" tasks. Each document judged relevant to a query
becomes a query of its own, searched `like` that document (its whole text and vector, itself left out); its
answers are the other documents relevant to the same query. A collection of 10-word queries gives queries of
documents' length, which is what its short queries cannot show of a fusion."""

from __future__ import annotations

import random

from app.offline.retrieval import JudgedCorpus

MIN_ANSWERS = 1  # a task needs another relevant document to find


def like_tasks(
    collection: JudgedCorpus, *, limit: int | None = None, seed: int = 0, as_text: bool = False
) -> JudgedCorpus:
    """Every (query, relevant document) with another document relevant to that query, as a task `like` the
    document; `limit` keeps that many, drawn with `seed` (in the order they were made). `as_text`: the document's
    text sent as a query instead, the document stored and judged out of its ranking afterwards (as BEIR's ArguAna
    judges an argument's counter-arguments, and as a caller who pastes a stored text finds it)."""
    text_of = dict(zip(collection.doc_ids, collection.doc_texts, strict=True))
    tasks: list[tuple[str, str, dict[str, int]]] = []
    for query in collection.query_ids:
        judged = {d: g for d, g in collection.qrels[query].items() if d in text_of}
        for doc in sorted(judged):
            others = {d: g for d, g in judged.items() if d != doc}
            if len(others) >= MIN_ANSWERS:
                tasks.append((f"{query}~{doc}", doc, others))
    if limit is not None and len(tasks) > limit:
        kept = sorted(random.Random(seed).sample(range(len(tasks)), limit))
        tasks = [tasks[i] for i in kept]
    return JudgedCorpus(
        doc_ids=collection.doc_ids,
        doc_texts=collection.doc_texts,
        query_ids=[task for task, _, _ in tasks],
        query_texts=[text_of[doc] for _, doc, _ in tasks],
        qrels={task: answers for task, _, answers in tasks},
        likes=None if as_text else [doc for _, doc, _ in tasks],
        own=[doc for _, doc, _ in tasks] if as_text else None,
    )
