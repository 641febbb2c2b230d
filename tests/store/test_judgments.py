"""Judgments and the tuned ranking in real Redis: replaced by query and document, dropped by query or whole."""


def test_judgments_are_replaced_by_query_and_document_and_dropped_by_query(store):
    assert store.judgments.put("c1", [("how to cook rice", "d1", 2), ("how to cook rice", "d2", 0)]) == 2
    assert store.judgments.put("c1", [("how to cook rice", "d1", 1), ("boil an egg", "d3", 3)]) == 3
    assert store.judgments.all("c1") == [
        ("boil an egg", "d3", 3),
        ("how to cook rice", "d1", 1),
        ("how to cook rice", "d2", 0),
    ]
    assert store.judgments.all("c2") == []
    assert store.judgments.delete("c1", "how to cook rice") == 2 and store.judgments.all("c1") == [
        ("boil an egg", "d3", 3)
    ]
    assert store.judgments.delete("c1", "unknown") == 0 and store.judgments.delete("c1") == 1


def test_a_published_ranking_is_read_back_and_dropped_with_its_collection(store):
    assert store.judgments.published_ranking("c1") is None
    store.judgments.publish_ranking("c1", {"ranking": {"mode": "hybrid", "fusion": "rrf"}})
    assert store.judgments.published_ranking("c1") == {"ranking": {"mode": "hybrid", "fusion": "rrf"}}
    store.judgments.put("c1", [("q", "d", 1)])
    store.drop_collection("c1")
    assert store.judgments.published_ranking("c1") is None and store.judgments.all("c1") == []
