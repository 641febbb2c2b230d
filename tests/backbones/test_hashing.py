"""The weight-free backbone the HTTP tests run on: deterministic, word-based, cut at its window like a tokenizer."""

from __future__ import annotations

import numpy as np

from app.backbones.hashing import HashingBackbone


def test_the_same_words_give_the_same_vector_and_others_another():
    backbone = HashingBackbone(dim=16)
    a, b, c = backbone.encode(["The cat sat", "the  cat, sat!", "a dog ran"])
    np.testing.assert_allclose(a, b)  # lower-cased words, punctuation ignored
    assert not np.allclose(a, c) and a.shape == (16,)
    assert HashingBackbone(dim=16).fingerprint == backbone.fingerprint != HashingBackbone(dim=8).fingerprint


def test_tokens_counts_and_the_window():
    backbone = HashingBackbone(max_length=5)
    text = "one two three four five six"
    assert backbone.token_counts([text]) == [8]  # its words, and [CLS] and [SEP] as a tokenizer counts them
    assert backbone.tokens_of([text]) == [["one", "two", "three"]]  # cut at the window, less the two specials
    assert len(backbone.token_ids([text])[0]) == 3
    weights = np.zeros(backbone.vocab_size)
    weights[backbone.token_ids(["two"])[0][0]] = 1.0  # SIF's table: only "two" counts
    np.testing.assert_allclose(backbone.encode(["one two"], weights), backbone.encode(["three two"], weights))
    assert not np.allclose(backbone.encode(["one two"]), backbone.encode(["three two"]))


def test_hashing_backbone_is_deterministic_and_word_based():
    b = HashingBackbone(dim=16)
    v = b.encode(["Red house", "red HOUSE", "blue tree"])
    np.testing.assert_array_equal(v[0], v[1])
    assert not np.allclose(v[0], v[2])
