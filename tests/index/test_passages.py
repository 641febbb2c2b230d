"""Long texts into passages: on sentence boundaries, within the window, overlapping by whole sentences; passage
keys, and passage hits collapsed into their documents."""

from __future__ import annotations

from app.index.passages import (
    PassageSplitter,
    best_passages,
    passage_key,
    passage_of,
    passage_spans,
    sentence_spans,
    spans_json,
    stored_spans,
)


def words(texts):
    return [len(t.split()) for t in texts]


def test_sentences_end_at_punctuation_and_line_breaks():
    text = "One two. Three four!\nFive six"
    assert [text[s:e] for s, e in sentence_spans(text)] == ["One two.", "Three four!", "Five six"]


def test_a_long_text_becomes_passages_of_whole_sentences_that_fit_and_overlap():
    sentences = [f"s{i} " + " ".join(["w"] * 9) + "." for i in range(10)]  # ten sentences of ten words
    text = " ".join(sentences)
    spans = passage_spans(text, words, window=30, overlap=10)
    passages = [text[s:e] for s, e in spans]
    assert all(len(p.split()) <= 30 for p in passages)
    assert [p.split()[0] for p in passages] == ["s0", "s2", "s4", "s6", "s8"]  # each shares one sentence
    assert passages[-1].endswith("s9 " + " ".join(["w"] * 9) + ".")
    assert passage_spans("short one.", words, window=30, overlap=10) == [(0, 10)]


def test_a_sentence_longer_than_the_window_is_cut_between_words():
    text = " ".join(f"w{i}" for i in range(25))
    passages = [text[s:e] for s, e in passage_spans(text, words, window=10, overlap=0)]
    assert passages == [" ".join(f"w{i}" for i in range(a, min(a + 10, 25))) for a in (0, 10, 20)]


def test_the_splitter_keeps_what_the_backbone_reads_whole_and_counts_without_special_tokens():
    def counts(texts):  # a backbone's token counts: two special tokens each
        return [len(t.split()) + 2 for t in texts]

    split = PassageSplitter(counts, max_length=12, window=200, overlap=40)
    assert (split.window, split.overlap) == (10, 5)
    assert split("a b c") == [(0, 5)]
    long = " ".join(["river"] * 30)
    assert len(split(long)) == 3


def test_spans_are_stored_only_for_documents_of_several_passages():
    assert spans_json([(0, 5)]) == "" and stored_spans("", "hello") == [(0, 5)]
    assert stored_spans(spans_json([(0, 3), (2, 9)]), "x" * 9) == [(0, 3), (2, 9)]


def test_passages_collapse_to_their_best_and_keys_round_trip():
    hits = [(passage_key("x", 2), 0.9), ("y", 0.8), (passage_key("x", 0), 0.7), (passage_key("z", 1), 0.6)]
    docs, best = best_passages(hits)
    assert docs == [("x", 0.9), ("y", 0.8), ("z", 0.6)]
    assert best == {"x": 2, "y": 0, "z": 1}
    assert passage_of(passage_key("a:b", 3)) == ("a:b", 3) and passage_of("plain") == ("plain", 0)
