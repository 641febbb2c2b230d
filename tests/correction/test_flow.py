"""The flow: invertible, learns a known Gaussian, finite on any input, stored and verified like any artifact."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from app.backbones.hashing import HashingBackbone
from app.correction.artifact import ArtifactFormatError, CorrectionArtifact
from app.correction.flow_training import FlowTraining, train_flow
from app.correction.pipeline import Correction
from app.offline.fit import fit_from_vectors

TINY = FlowTraining(blocks=2, hidden=32, lr=3e-3, batch=128, max_epochs=30, patience=30, whiten=False)


def gaussian(n, dim=8, seed=0):
    rng = np.random.default_rng(seed)
    mixing = rng.standard_normal((dim, dim)) * 0.5 + np.eye(dim)
    mean = rng.standard_normal(dim) * 3
    return (rng.standard_normal((n, dim)) @ mixing.T + mean).astype(np.float32), mean, mixing @ mixing.T


@pytest.fixture(scope="module")
def trained():
    x, _, cov = gaussian(3000)
    flow, history = train_flow(x, TINY, progress=False)
    return x, cov, flow, history


def test_x_to_z_to_x_within_1e_4(trained):
    x, _, flow, _ = trained
    back = flow.inverse(flow.forward(x[:500]))
    np.testing.assert_allclose(back, x[:500], atol=1e-4)


def test_the_output_is_close_to_standard_normal(trained):
    x, _, flow, _ = trained
    z = flow.forward(x)
    assert np.abs(z.mean(0)).max() < 0.1 and np.abs(np.cov(z.T) - np.eye(x.shape[1])).max() < 0.15


def test_no_input_gives_nan_or_inf(trained):
    _, _, flow, _ = trained
    extreme = np.array(
        [[1e30] * 8, [-1e30] * 8, [np.inf] * 8, [np.nan] * 8, [0.0] * 8, [3.4e38, -3.4e38] * 4], dtype=np.float32
    )
    assert np.isfinite(flow.forward(extreme)).all()


def test_a_flow_artifact_round_trips_and_its_weights_are_checksummed():
    backbone = HashingBackbone(dim=8)
    x, _, _ = gaussian(600)
    artifact = fit_from_vectors(
        backbone, [str(i) for i in range(600)], x, "flow", {"blocks": 2, "hidden": 16, "whiten": 0.5}
    )
    assert artifact.method == "flow" and any(k.startswith("flow.") for k in artifact.arrays)
    again = CorrectionArtifact.from_bytes(artifact.to_bytes())
    assert again.id == artifact.id
    np.testing.assert_allclose(Correction(again).apply(x[:5]), Correction(artifact).apply(x[:5]), atol=1e-6)
    with np.load(io.BytesIO(artifact.to_bytes())) as z:
        stored = dict(z)
    name = next(k for k in stored if k.endswith(".weight"))
    stored[name] = stored[name] + 1e-3  # one flow weight changed, the metadata and its checksum kept
    buf = io.BytesIO()
    np.savez(buf, **stored)
    with pytest.raises(ArtifactFormatError, match="checksum"):
        CorrectionArtifact.from_bytes(buf.getvalue())


def test_held_out_likelihood_rises_to_that_of_the_true_gaussian(trained):
    x, cov, _, history = trained
    assert max(history) > history[0] + 0.1  # actnorm starts it near; the couplings and mixing do the rest
    d = x.shape[1]
    best_possible = -0.5 * math.log(2 * math.pi * math.e) - 0.5 * np.linalg.slogdet(cov)[1] / d
    assert max(history) == pytest.approx(best_possible, abs=0.05)  # nats per dimension
