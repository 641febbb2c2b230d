"""The lexical index's coverage: the share of a query's idf each hit holds, from one more tantivy query."""

import math

import pytest

from app.index.lexical import Analyzer, LexicalIndex


@pytest.fixture
def lexical(tmp_path):
    index = LexicalIndex(tmp_path / "lex", Analyzer())
    texts = {f"f{i}": f"a ticket about the weather number {i}" for i in range(20)}
    texts |= {"target": "ticket 427116 was closed", "other": "ticket ticket ticket ticket"}
    index.upsert(list(texts), list(texts.values()))
    index.commit()
    yield index
    index.close()


def test_coverage_is_the_share_of_the_querys_idf_a_document_holds(lexical):
    hits, coverage = lexical.search_covered("ticket #427116", 10)
    assert hits == lexical.search("ticket #427116", 10) and hits  # the same hits, in the same order
    n = 22
    idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in (("ticket", 22), ("427116", 1))}
    assert coverage["target"] == pytest.approx(1.0)
    assert coverage["other"] == pytest.approx(idf["ticket"] / sum(idf.values()), rel=1e-5)  # repeats add nothing
    assert set(coverage) == {d for d, _ in hits}


def test_coverage_respects_the_allowed_ids_and_an_empty_query(lexical):
    hits, coverage = lexical.search_covered("ticket 427116", 10, allowed={"other", "f3"})
    assert {d for d, _ in hits} == {"other", "f3"} and coverage["f3"] == coverage["other"]
    assert lexical.search_covered("the", 10) == ([], {})  # a stop word alone: no terms
