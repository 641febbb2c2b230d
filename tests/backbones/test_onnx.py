"""The ONNX Runtime backbone: the torch backbone's vectors (fp32 to rounding, int8 close), every pooling,
SIF's weights, a fingerprint of its own, and an export made once."""

import numpy as np
import pytest

from app.backbones import build_backbone
from app.core.config import MODELS_DIR, STS_DIR, Settings
from app.core.names import STUDIED_POOLINGS, Pooling
from app.correction.publication import find_bundled
from app.correction.sif import sif_weights, token_counts
from app.offline.datasets import read_corpus
from tests.conftest import with_graphs

pytestmark = pytest.mark.model
SENTENCES = read_corpus(STS_DIR / "sts-test.csv")[:400]


@pytest.fixture(scope="module")
def cache(tmp_path_factory, onnx_graphs):
    return with_graphs(onnx_graphs, tmp_path_factory.mktemp("onnx-data"))


def onnx_backbone(cache, pooling=Pooling.MEAN, quantize="none"):
    return build_backbone(Settings(backbone="onnx", pooling=pooling, quantize=quantize, data_dir=cache))


def torch_backbone(pooling=Pooling.MEAN):
    return build_backbone(Settings(backbone="huggingface", pooling=pooling))


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.mark.parametrize("pooling", list(Pooling))
def test_fp32_gives_the_torch_backbones_vectors_for_every_pooling(cache, pooling):
    got = onnx_backbone(cache, pooling).encode(SENTENCES)
    assert got.shape == (len(SENTENCES), 384) and got.dtype == np.float32
    assert cosines(got, torch_backbone(pooling).encode(SENTENCES)).min() >= 0.9999


def test_int8_stays_close_to_the_torch_vectors(cache):
    cos = cosines(onnx_backbone(cache, quantize="int8").encode(SENTENCES), torch_backbone().encode(SENTENCES))
    assert cos.mean() >= 0.99 and cos.min() >= 0.98, (cos.mean(), cos.min())


def test_sif_token_weights_pool_as_in_the_torch_backbone(cache):
    reference = torch_backbone()
    weights = sif_weights(token_counts(reference.token_ids(SENTENCES), reference.vocab_size))
    got = onnx_backbone(cache).encode(SENTENCES[:50], token_weights=weights)
    assert cosines(got, reference.encode(SENTENCES[:50], token_weights=weights)).min() >= 0.9999
    assert cosines(got, onnx_backbone(cache).encode(SENTENCES[:50])).min() < 0.999  # the weights did change it


def test_runtime_and_quantization_are_in_the_fingerprint_and_the_export_is_made_once(cache):
    fp32, int8 = onnx_backbone(cache), onnx_backbone(cache, quantize="int8")
    assert len({fp32.fingerprint, int8.fingerprint, torch_backbone().fingerprint}) == 3
    assert (fp32.runtime, int8.runtime, torch_backbone().runtime) == ("onnxruntime-fp32", "onnxruntime-int8", "torch")
    exported = {p: p.stat().st_mtime_ns for p in (cache / "onnx").glob("*.onnx")}
    again = onnx_backbone(cache, quantize="int8")
    assert again.fingerprint == int8.fingerprint
    assert {p: p.stat().st_mtime_ns for p in (cache / "onnx").glob("*.onnx")} == exported
    assert not list((cache / "onnx").glob("*.tmp"))


def test_the_int8_backbone_has_bundled_corrections_of_its_own(cache):
    for pooling in STUDIED_POOLINGS:
        backbone = onnx_backbone(cache, pooling, quantize="int8")
        artifact = find_bundled(MODELS_DIR, backbone)
        assert artifact is not None and artifact.backbone.fingerprint == backbone.fingerprint
        assert find_bundled(MODELS_DIR, torch_backbone(pooling)).backbone.fingerprint != backbone.fingerprint
