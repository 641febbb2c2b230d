"""`bench-tune`: a judged collection tuned over HTTP as a user would, on a fresh service: its documents (as eval-http
posts them) and judgments posted, POST /collections/default/tune, and the record the service publishes (held-out
figures)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from app.offline.retrieval import JudgedCorpus

BATCH = 128


def call(url: str, path: str, body: dict[str, Any] | None = None, method: str | None = None) -> tuple[int, Any]:
    """Status and JSON answer of one request (the standard library's client: benchmarks install nothing)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url + path, data, {"Content-Type": "application/json"}, method=method or ("POST" if data else "GET")
    )
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def post_documents(url: str, collection: JudgedCorpus, clients: int, batch: int) -> int:
    """Every non-blank document posted in batches by `clients` threads at once; how many were left out blank."""
    docs = [{"id": d, "text": t} for d, t in zip(collection.doc_ids, collection.doc_texts, strict=True) if t.strip()]

    def post(start: int) -> None:
        status, answer = call(url, "/documents", {"documents": docs[start : start + batch]})
        if status != 201:
            raise RuntimeError(f"POST /documents: {status} {answer}")

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(post, range(0, len(docs), batch)))
    return len(collection.doc_ids) - len(docs)


def tune_over_http(url: str, collection: JudgedCorpus, *, poll: float = 2.0) -> dict[str, Any]:
    """Post the documents and every judgment, start a tune, wait for it; its status as GET shows it."""
    blank = post_documents(url, collection, clients=1, batch=BATCH)  # the API refuses an empty text (Cranfield has one)
    judged = [
        {"query": text, "id": d, "grade": g}
        for q, text in zip(collection.query_ids, collection.query_texts, strict=True)
        for d, g in collection.qrels[q].items()
    ]
    for start in range(0, len(judged), BATCH):
        status, answer = call(url, "/collections/default/judgments", {"judgments": judged[start : start + BATCH]})
        if status != 201:
            raise RuntimeError(f"POST judgments: {status} {answer}")
    started = time.monotonic()
    status, answer = call(url, "/collections/default/tune", method="POST")
    if status != 202:
        raise RuntimeError(f"POST tune: {status} {answer}")
    while (answer := call(url, "/collections/default/tune")[1])["state"] == "running":
        time.sleep(poll)
    return {
        **answer,
        "judgments": len(judged),
        "blank_documents_left_out": blank,
        "tune_seconds": round(time.monotonic() - started, 1),
    }
