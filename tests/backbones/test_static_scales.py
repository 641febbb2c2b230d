"""Same text, same vector: every backbone and pooling the service ships gives a text the same vector alone and in a
round of 1 to 255 batch-mates of random lengths, through the real encoder (int8 did not, before its scales were
fixed once: cosine 0.9932 at worst on STS-B sentences)."""

from __future__ import annotations

import numpy as np
import pytest

from app.backbones import build_backbone
from app.backbones.static_scales import calibration_texts, model_inputs
from app.core.config import STS_DIR, Settings
from app.engine.encoder import BatchingEngine
from tests.conftest import with_graphs

TEXTS = 120  # rounds of 2 to 256 of them: a round-dependent vector (dynamic int8 scales) moves by 1e-3
SERVED = [
    ("hashing", "none", "mean"),
    *(("onnx", "int8", p) for p in ("mean", "cls", "first_last_avg", "embedding_avg")),
    ("onnx", "none", "mean"),
    *(("huggingface", "none", p) for p in ("mean", "cls", "first_last_avg", "embedding_avg")),
]


def texts_of_random_lengths(n: int, seed: int = 1) -> list[str]:
    """STS-B test sentences, and passages of 2 to 20 of them: lengths from a few tokens to the cut at 256."""
    rows = [r.split("\t") for r in (STS_DIR / "sts-test.csv").read_text(encoding="utf-8").splitlines()]
    sentences = sorted({r[5] for r in rows if len(r) >= 7})
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(sentences, 1 if rng.random() < 0.6 else rng.integers(2, 21))) for _ in range(n)]


@pytest.mark.model
@pytest.mark.parametrize(("backbone", "quantize", "pooling"), SERVED)
def test_a_text_has_one_vector_whatever_its_round_holds(backbone, quantize, pooling, onnx_graphs, tmp_path):
    settings = Settings(
        backbone=backbone, quantize=quantize, pooling=pooling, data_dir=with_graphs(onnx_graphs, tmp_path / "d")
    )
    engine = BatchingEngine(lambda: build_backbone(settings), round_texts=256, round_tokens=16_384)
    texts = texts_of_random_lengths(TEXTS)
    rng = np.random.default_rng(2)
    try:
        alone = np.vstack([engine.encode([t]) for t in texts])
        mixed = np.empty_like(alone)
        order, start = rng.permutation(TEXTS), 0
        while start < TEXTS:  # rounds of 2 to 256 texts of random lengths, in random order
            rows = order[start : start + int(rng.integers(2, 257))]
            mixed[rows] = engine.encode([texts[i] for i in rows])
            start += len(rows)
    finally:
        engine.close()
    alone /= np.linalg.norm(alone, axis=1, keepdims=True)
    mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
    cosines = (alone * mixed).sum(axis=1)
    assert cosines.min() >= 0.99999, (backbone, quantize, pooling, float(cosines.min()))


def test_the_calibration_set_is_fixed_and_holds_sentences_and_passages():
    texts = calibration_texts()
    assert texts == calibration_texts()  # the same scales from every export
    lengths = sorted(len(t.split()) for t in texts)
    assert len(texts) > 1000 and lengths[len(lengths) // 2] < 20 and lengths[-1] > 100


def test_inputs_are_right_padded_and_masked():
    feed = model_inputs([[5, 6, 7], [5]], pad_id=0, names={"input_ids", "attention_mask"})
    assert feed["input_ids"].tolist() == [[5, 6, 7], [5, 0, 0]]
    assert feed["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]] and set(feed) == {"input_ids", "attention_mask"}
