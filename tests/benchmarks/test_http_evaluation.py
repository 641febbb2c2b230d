"""`eval-http`'s client: documents posted by several clients at once, every query searched, figures from the ids."""

from __future__ import annotations

from app.benchmarks.http_evaluation import evaluate_over_http
from app.offline.retrieval import JudgedCorpus

TOPICS = "rain sun plane dog cat tree house river road boat".split()


def corpus() -> JudgedCorpus:
    """150 documents (one blank) in batches of several requests; each query is one document's own text."""
    texts = [f"{TOPICS[i % 10]} {TOPICS[(i // 10) % 10]} story number {i} of {i * 7}" for i in range(149)] + ["  "]
    ids = [f"d{i}" for i in range(150)]
    queries = [0, 42, 77, 148]
    return JudgedCorpus(
        ids, texts, [f"q{i}" for i in queries], [texts[i] for i in queries], {f"q{i}": {f"d{i}": 1} for i in queries}
    )


def test_concurrent_clients_index_every_document_and_the_figures_come_from_the_answers(client):
    url = str(client.base_url).rstrip("/")
    for name in ("a", "b"):
        assert client.post("/collections", json={"name": name}).status_code == 201
    first = evaluate_over_http(f"{url}/collections/a", corpus(), clients=4, mode="lexical", batch=8, depth=20)
    assert client.get("/collections/a").json()["documents"] == 149
    assert (first["ndcg_at_10"], first["success_at_1"], first["blank_documents_left_out"]) == (100.0, 100.0, 1)
    assert (first["n_queries"], first["n_docs"], first["clients"]) == (4, 150, 4)
    alone = evaluate_over_http(f"{url}/collections/b", corpus(), clients=1, mode="lexical", batch=8, depth=20)
    assert alone["rankings_sha256"] == first["rankings_sha256"]  # many equal BM25 scores: ordered by id, not arrival
    fields = [getattr(corpus(), f) for f in ("doc_ids", "doc_texts", "query_ids", "query_texts")]
    missed = JudgedCorpus(*fields, {q: {"d1": 1} for q in fields[2]})
    assert evaluate_over_http(url, missed, clients=2, mode="lexical", batch=8, depth=20)["success_at_1"] == 0.0
