"""BM25 over shards scores as one index of all their documents: the same scores (to 1e-4), so the same top-k."""

import random

import pytest

from app.index import global_bm25
from app.index.global_bm25 import LexicalStatistics
from app.index.lexical import Analyzer, LexicalIndex
from app.store.keys import shard_of

WORDS = [f"w{i}" for i in range(300)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """4,000 texts of 3 to 80 Zipf-distributed words: one index of them all, and three shards of them."""
    rng = random.Random(0)
    weights = [1 / (j + 1) for j in range(len(WORDS))]
    texts = {f"d{i}": " ".join(rng.choices(WORDS, weights=weights, k=rng.randint(3, 80))) for i in range(4000)}
    folder = tmp_path_factory.mktemp("bm25")
    analyzer = Analyzer("english")
    whole = LexicalIndex(folder / "whole", analyzer)
    whole.upsert(list(texts), list(texts.values()))
    whole.commit()
    shards = [LexicalIndex(folder / f"s{n}", analyzer, sentinel=True) for n in range(3)]
    for n, shard in enumerate(shards):
        ids = [d for d in texts if shard_of(d, 3) == n]
        shard.upsert(ids, [texts[d] for d in ids])
        shard.commit()
    return texts, whole, shards


def sharded(shards, text, k, allowed=None):
    total = LexicalStatistics.summed([global_bm25.statistics(s, text) for s in shards])
    hits, coverage = [], {}
    for shard in shards:
        found, covered = global_bm25.search(shard, text, k, total, allowed)
        hits += found
        coverage |= covered
    return sorted(hits, key=lambda h: (-h[1], h[0]))[:k], coverage


def test_the_shards_statistics_add_up_to_the_whole_indexs(corpus):
    texts, whole, shards = corpus
    total = LexicalStatistics.summed([global_bm25.statistics(s, "w1 w7 w1 w299 nothing") for s in shards])
    assert total.docs == len(texts) == len(whole) and sum(len(s) for s in shards) == len(texts)
    assert total.tokens == pytest.approx(sum(len(whole.terms(t)) for t in texts.values()), rel=1e-6)
    assert total.doc_freq["w1"] == sum("w1" in t.split() for t in texts.values())
    assert total.doc_freq["noth"] == 0 and "\x00statistics" not in {i for s in shards for i in s.ids()}


def test_sharded_scores_equal_one_indexs_and_so_do_the_top_ten(corpus):
    _, whole, shards = corpus
    rng = random.Random(1)
    for _ in range(100):
        text = " ".join(rng.sample(WORDS[:200], rng.randint(1, 4)))
        expected, expected_coverage = whole.search_covered(text, 10)
        found, coverage = sharded(shards, text, 10)
        assert [s for _, s in found] == pytest.approx([s for _, s in expected], rel=1e-4), text
        # ties aside (equal scores, which either index may order its own way), the same documents
        assert {d for d, s in found if s > found[-1][1] + 1e-4} <= {d for d, _ in expected}
        both = {d for d, _ in found} & {d for d, _ in expected}
        assert {d: round(coverage[d], 4) for d in both} == {d: round(expected_coverage[d], 4) for d in both}


def test_a_filter_and_an_unknown_word_are_answered_like_one_index(corpus):
    texts, whole, shards = corpus
    allowed = set(list(texts)[:500])
    expected, _ = whole.search_covered("w3 w40", 10, allowed=allowed)
    found, _ = sharded(shards, "w3 w40", 10, allowed)
    assert [s for _, s in found] == pytest.approx([s for _, s in expected], rel=1e-4)
    assert {d for d, _ in found} <= allowed
    assert sharded(shards, "zzzz", 10) == ([], {})
    assert sharded(shards, "qqcestatisticssentinelqq", 10) == ([], {})  # the sentinel is never found
