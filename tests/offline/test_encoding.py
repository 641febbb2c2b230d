"""Texts to vectors offline: in chunks, each distinct text once, in a correction's space."""

from __future__ import annotations

import numpy as np

from app.backbones.hashing import HashingBackbone
from app.offline.encoding import RememberingBackbone, corrected_vectors, encode_all


class Counting(HashingBackbone):
    def __init__(self):
        super().__init__(dim=8)
        self.encoded: list[str] = []

    def encode(self, texts, token_weights=None):
        self.encoded += list(texts)
        return super().encode(texts, token_weights)


def test_chunks_give_what_one_call_gives():
    backbone = HashingBackbone(dim=8)
    texts = [f"text number {i}" for i in range(1100)]  # three chunks of at most 512
    np.testing.assert_allclose(encode_all(backbone, texts, progress=False), backbone.encode(texts), rtol=1e-6)


def test_a_text_seen_twice_is_encoded_once_and_weighted_pooling_is_never_remembered():
    counting = Counting()
    remembering = RememberingBackbone(counting)
    first = remembering.encode(["a", "b", "a"])
    again = remembering.encode(["b", "c"])
    assert counting.encoded == ["a", "b", "c"] and np.allclose(first[1], again[0])
    weights = np.ones(counting.vocab_size)
    remembering.encode(["a"], token_weights=weights)
    assert counting.encoded[-1] == "a" and remembering.tokens_of(["a b"]) == [["a", "b"]]


def test_vectors_in_a_corrections_space_are_the_raw_ones_mapped(artifact_factory):
    from app.correction import Correction

    backbone = HashingBackbone(dim=8)
    texts = [f"the {w} runs" for w in "cat dog bird fish cow hen fox owl ant bee".split()] * 3
    raw = backbone.encode(texts)
    correction = Correction(artifact_factory(raw, fingerprint=backbone.fingerprint))
    mapped = corrected_vectors(backbone, correction, texts, raw, progress=False)
    np.testing.assert_allclose(mapped, correction.apply(raw), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(corrected_vectors(backbone, correction, texts, progress=False), mapped, atol=1e-5)
