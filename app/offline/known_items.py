"""Known-item queries built from any collection: identifiers planted in single documents (and decoys of the same
shapes in others) and rare words found in one document, each query's one relevant document to come first. These are
the searches people use hybrid search for, and the ones a fusion that stretches a list without signal buries."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

from app.offline.retrieval import JudgedCorpus

IDENTIFIER, RARE = "identifier", "rare"  # the two kinds of query, the prefix of their ids
_WORD = re.compile(r"[a-z]{6,}")
CARRIERS = ("Reference {}.", "See {} for details.", "({})", "Filed under {}.", "Code {} applies.")


def identifier(shape: int, rng: random.Random) -> str:
    """One identifier of a common shape: a product number, an error code, a CVE, a part number, a ticket."""

    def digits(n: int) -> str:
        return "".join(rng.choices("0123456789", k=n))

    def letters(n: int) -> str:
        return "".join(rng.choices("ABCDEFGHJKLMNPQRSTUVWXYZ", k=n))

    shapes = (
        f"SKU-{digits(5)}",
        f"ERR{digits(3)}{letters(1)}",
        f"CVE-{rng.randint(1999, 2025)}-{digits(5)}",
        f"{letters(2)}{digits(4)}",
        f"ticket #{digits(6)}",
    )
    return shapes[shape % len(shapes)]


def rare_words(texts: list[str]) -> dict[str, int]:
    """Words (6+ letters) that occur in exactly one document, and that document's row."""
    seen: Counter[str] = Counter()
    where: dict[str, int] = {}
    for row, text in enumerate(texts):
        for word in set(_WORD.findall(text.lower())):
            seen[word] += 1
            where[word] = row
    return {w: where[w] for w, n in seen.items() if n == 1}


def known_items(collection: JudgedCorpus, *, identifiers: int = 100, rare: int = 100, seed: int = 0) -> JudgedCorpus:
    """The collection with `identifiers` identifiers planted in as many documents (and as many decoys of the same
    shapes in others), and queries for them and for `rare` words found in a single document; one judgment each."""
    rng = random.Random(seed)
    texts = list(collection.doc_texts)
    if identifiers * 2 > len(texts):
        raise ValueError(
            f"{identifiers} identifiers and as many decoys need {identifiers * 2} documents, not {len(texts)}"
        )
    rows = rng.sample(range(len(texts)), identifiers * 2)
    queries: list[tuple[str, str, str]] = []  # (query id, text, relevant document id)
    used: set[str] = set()
    for n, row in enumerate(rows):
        ident = identifier(n, rng)
        while ident in used:
            ident = identifier(n, rng)
        used.add(ident)
        texts[row] = f"{texts[row]} {rng.choice(CARRIERS).format(ident)}"
        if n < identifiers:  # the rest are decoys: the same shapes and prefixes in other documents
            queries.append((f"{IDENTIFIER}-{n}", ident, collection.doc_ids[row]))
    found = rare_words(texts)
    for n, word in enumerate(rng.sample(sorted(found), min(rare, len(found)))):
        queries.append((f"{RARE}-{n}", word, collection.doc_ids[found[word]]))
    return replace(
        collection,
        doc_texts=texts,
        query_ids=[q for q, _, _ in queries],
        query_texts=[t for _, t, _ in queries],
        qrels={q: {d: 1} for q, _, d in queries},
    )


def from_texts(texts: list[str]) -> JudgedCorpus:
    """A collection of plain texts (one per line of a corpus), ids d0, d1, ..., no queries yet."""
    unique = list(dict.fromkeys(t for t in texts if t.strip()))
    return JudgedCorpus([f"d{i}" for i in range(len(unique))], unique, [], [], {})


def write_beir(collection: JudgedCorpus, folder: Path) -> Path:
    """The collection in the BEIR layout `eval-search --data` reads: corpus.jsonl, queries.jsonl, qrels/test.tsv."""
    folder = Path(folder)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for doc_id, text in zip(collection.doc_ids, collection.doc_texts, strict=True):
            fh.write(json.dumps({"_id": doc_id, "title": "", "text": text}) + "\n")
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for query_id, text in zip(collection.query_ids, collection.query_texts, strict=True):
            fh.write(json.dumps({"_id": query_id, "text": text}) + "\n")
    lines = ["query-id\tcorpus-id\tscore"]
    lines += [f"{q}\t{d}\t{g}" for q, judged in collection.qrels.items() for d, g in judged.items()]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder
