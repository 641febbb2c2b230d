"""BM25 across shards as one index would score it: each shard counts its documents, tokens and the query's document
frequencies, the server adds them up, and each shard scores its candidates with the sums (Elasticsearch's
dfs_query_then_fetch). tantivy scores with its own statistics, so a shard finds candidates with the global idf (a
boost per term) and then scores each exactly from the term frequencies and length tantivy explains."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import tantivy

from app.index.lexical import BODY, ID, SENTINEL_ID, LexicalIndex

K1, B = 1.2, 0.75  # tantivy's BM25 parameters
MARGIN = 10  # candidates a shard takes beyond k: its own lengths may order the last few differently
TERM = re.compile(r'Term=Term\(field=\d+, type=Str, "(.*)"\)$')


@dataclass(frozen=True)
class LexicalStatistics:
    """Documents, tokens and the query's terms' document frequencies: one shard's, or all of them added up."""

    docs: int = 0
    tokens: float = 0.0
    doc_freq: dict[str, int] = field(default_factory=dict)

    @classmethod
    def summed(cls, parts: Sequence[LexicalStatistics]) -> LexicalStatistics:
        freq: dict[str, int] = {}
        for part in parts:
            for term, n in part.doc_freq.items():
                freq[term] = freq.get(term, 0) + n
        return cls(sum(p.docs for p in parts), sum(p.tokens for p in parts), freq)

    def idf(self, term: str) -> float:
        n = self.doc_freq.get(term, 0)
        return math.log(1 + (self.docs - n + 0.5) / (n + 0.5))

    @property
    def average_length(self) -> float:
        return self.tokens / self.docs if self.docs else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"docs": self.docs, "tokens": self.tokens, "doc_freq": self.doc_freq}


def statistics(index: LexicalIndex, text: str) -> LexicalStatistics:
    """This shard's part of the statistics a query is scored with (its sentinel explains the counts)."""
    searcher = index.searcher()
    query = index.term_query(index.sentinel_term)
    hits = searcher.search(query, 1).hits
    if not hits:
        raise RuntimeError("this lexical index holds no statistics sentinel: it was not opened as a shard's")
    docs, average = _counts(json.loads(query.explain(searcher, hits[0][1]).to_json()))
    freq = {t: int(searcher.doc_freq(BODY, t)) for t in set(index.terms(text)) if t != index.sentinel_term}
    return LexicalStatistics(docs - 1, average * docs - 1, freq)  # the sentinel (one token) left out


def search(
    index: LexicalIndex, text: str, k: int, total: LexicalStatistics, allowed: Collection[str] | None = None
) -> tuple[list[tuple[str, float]], dict[str, float]]:
    """This shard's top-k under the collection's statistics `total`, with each hit's share of the query's idf (as
    `LexicalIndex.search_covered` gives it): the scores one index of every shard's documents would give."""
    terms = [t for t in index.terms(text) if t != index.sentinel_term]
    searcher = index.searcher()
    if not terms or k < 1 or (allowed is not None and not allowed):
        return [], {}
    local = LexicalStatistics(searcher.num_docs, 0.0, {t: int(searcher.doc_freq(BODY, t)) for t in set(terms)})
    clauses = [
        (tantivy.Occur.Should, tantivy.Query.boost_query(index.term_query(t), total.idf(t) / local.idf(t)))
        for t in terms
        if local.doc_freq[t]
    ]
    if not clauses:
        return [], {}
    query = tantivy.Query.boolean_query(clauses)
    if allowed is not None:
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, index.only(allowed))])
    scored = []
    for _, address in searcher.search(query, k + MARGIN).hits:
        doc_id = searcher.doc(address)[ID][0]
        if doc_id == SENTINEL_ID:
            continue
        matched = _matches(json.loads(query.explain(searcher, address).to_json()))
        scored.append((doc_id, _bm25(matched, total), {t for t, _, _ in matched}))
    scored.sort(key=lambda hit: (-hit[1], hit[0]))
    weight = sum(total.idf(t) for t in set(terms)) or 1.0
    coverage = {d: min(1.0, sum(total.idf(t) for t in held) / weight) for d, _, held in scored[:k]}
    return [(d, score) for d, score, _ in scored[:k]], coverage


def _bm25(matched: list[tuple[str, float, float]], total: LexicalStatistics) -> float:
    average = total.average_length
    return sum(
        (K1 + 1) * total.idf(t) * freq / (freq + K1 * (1 - B + B * length / average)) for t, freq, length in matched
    )


def _details(node: dict[str, Any]) -> dict[str, float]:
    """A node's children's values by the first word of their description."""
    return {d["description"].split(",")[0].split(" ")[0]: d["value"] for d in node.get("details", [])}


def _walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("details", []):
        yield from _walk(child)


def _matches(explanation: dict[str, Any]) -> list[tuple[str, float, float]]:
    """(term, frequency in the document, the document's length) for each term clause that matched."""
    out = []
    for node in _walk(explanation):
        if node.get("description", "").startswith("TermQuery"):
            matched = TERM.match(node["context"][0])
            if matched is None:
                continue
            term = matched.group(1)
            norm = next(n for n in node["details"] if n["description"].startswith("freq /"))
            values = _details(norm)
            out.append((term, values["freq"], values["dl"]))
    return out


def _counts(explanation: dict[str, Any]) -> tuple[int, float]:
    """(documents, average length) from the explanation of a term's score."""
    for node in _walk(explanation):
        if node.get("description", "").startswith("idf"):
            docs = int(_details(node)["N"])
        if node.get("description", "").startswith("freq /"):
            average = _details(node)["avgdl"]
    return docs, average
