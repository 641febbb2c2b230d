"""The collection's own lexical list: BM25 hits with their share of the query's idf, none in a writer's index."""

from app.index.dense_lists import Scope
from app.index.lexical import Analyzer, LexicalIndex
from app.index.lexical_lists import LexicalList, LocalLexical


class Indexed:
    """The parts of a SearchIndex a lexical source reads."""

    def __init__(self, lexical):
        self.lexical = lexical


def test_the_local_list_is_the_indexs_bm25_with_coverage_and_empty_without_one(tmp_path):
    lexical = LexicalIndex(tmp_path / "lex", Analyzer())
    lexical.upsert(["a", "b", "c"], ["the cat sleeps", "a dog runs", "the cat and the dog"])
    lexical.commit()
    found = LocalLexical().search(Indexed(lexical), "cat dog", 10)
    assert [d for d, _ in found.hits] == ["c", "a", "b"] and found.missing == []
    assert found.coverage["c"] == 1.0 and 0 < found.coverage["a"] < 1
    assert LocalLexical().search(Indexed(lexical), "cat", 10, Scope(allowed={"a"})).hits[0][0] == "a"
    assert LocalLexical().search(Indexed(None), "cat", 10) == LexicalList()
