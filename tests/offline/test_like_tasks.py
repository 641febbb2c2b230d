"""More like this tasks: each relevant document a query of its own, the others relevant to that query its answers."""

from __future__ import annotations

from app.offline.like_tasks import like_tasks
from app.offline.retrieval import JudgedCorpus

COLLECTION = JudgedCorpus(
    doc_ids=["a", "b", "c", "d"],
    doc_texts=["alpha text", "beta text", "gamma text", "delta text"],
    query_ids=["q1", "q2"],
    query_texts=["first", "second"],
    qrels={"q1": {"a": 2, "b": 1, "gone": 1}, "q2": {"c": 1}},
)


def test_each_relevant_document_with_a_sibling_is_a_task_whose_answers_are_its_siblings():
    tasks = like_tasks(COLLECTION)
    assert tasks.query_ids == ["q1~a", "q1~b"]  # q2 has one relevant document: nothing else to find
    assert tasks.likes == ["a", "b"] and tasks.query_texts == ["alpha text", "beta text"]
    assert tasks.qrels == {"q1~a": {"b": 1}, "q1~b": {"a": 2}}  # a judged id not in the corpus is no answer
    assert tasks.doc_ids == COLLECTION.doc_ids


def test_a_limit_keeps_a_seeded_draw_in_order():
    wide = JudgedCorpus(
        [f"d{i}" for i in range(30)],
        [f"text {i}" for i in range(30)],
        ["q"],
        ["query"],
        {"q": {f"d{i}": 1 for i in range(30)}},
    )
    every, some = like_tasks(wide).query_ids, like_tasks(wide, limit=5, seed=3)
    assert len(some.query_ids) == 5 and some.query_ids == [t for t in every if t in some.query_ids]
    assert some.query_ids == like_tasks(wide, limit=5, seed=3).query_ids != like_tasks(wide, limit=5, seed=4).query_ids


def test_as_text_the_same_tasks_send_the_document_s_text_and_judge_it_out_of_its_ranking():
    pasted = like_tasks(COLLECTION, as_text=True)
    assert pasted.likes is None and pasted.own == ["a", "b"] and pasted.query_texts == ["alpha text", "beta text"]
    assert pasted.qrels == like_tasks(COLLECTION).qrels
    assert [pasted.own_document(row) for row in (0, 1)] == ["a", "b"] and COLLECTION.own_document(0) is None
