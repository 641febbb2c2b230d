"""Dense heads and Normalize in numpy compute what torch's modules compute; a head that cannot be run is refused."""

import json

import numpy as np
import pytest
import torch

from app.backbones.architecture import FolderRefused
from app.backbones.heads import ACTIVATIONS, Dense, Normalize, read_dense


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_each_activation_is_torchs(name):
    module = {
        "Identity": torch.nn.Identity(),
        "Tanh": torch.nn.Tanh(),
        "ReLU": torch.nn.ReLU(),
        "Sigmoid": torch.nn.Sigmoid(),
        "GELU": torch.nn.GELU(),
    }[name.rsplit(".", 1)[1]]
    rng = np.random.default_rng(0)
    x, weight, bias = (rng.normal(size=s).astype(np.float32) for s in ((4, 6), (3, 6), (3,)))
    linear = torch.nn.Linear(6, 3)
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(weight))
        linear.bias.copy_(torch.from_numpy(bias))
        expected = module(linear(torch.from_numpy(x))).numpy()
    np.testing.assert_allclose(Dense(weight, bias, name)(x), expected, rtol=1e-5, atol=1e-6)


def test_normalize_gives_unit_rows_and_keeps_zeros():
    out = Normalize()(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])


def _dense_folder(path, config, weight, bias=None):
    from safetensors.numpy import save_file

    path.mkdir()
    (path / "config.json").write_text(json.dumps(config))
    save_file(
        {"linear.weight": weight, **({"linear.bias": bias} if bias is not None else {})}, path / "model.safetensors"
    )
    return path


def test_a_dense_folder_is_read_and_checked(tmp_path):
    weight = np.ones((2, 3), dtype=np.float32)
    config = {"in_features": 3, "out_features": 2, "bias": False}
    dense = read_dense(_dense_folder(tmp_path / "ok", config, weight))
    assert dense.bias is None and dense.activation.endswith("Tanh")  # sentence-transformers' default activation
    with pytest.raises(FolderRefused, match="do not match its config's 3 -> 4"):
        read_dense(_dense_folder(tmp_path / "shape", {**config, "out_features": 4}, weight))
    with pytest.raises(FolderRefused, match="activation 'my.Swish' is not served"):
        read_dense(_dense_folder(tmp_path / "swish", {**config, "activation_function": "my.Swish"}, weight))
    with pytest.raises(FolderRefused, match="residual"):
        read_dense(_dense_folder(tmp_path / "residual", {**config, "use_residual": True}, weight))
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty/config.json").write_text(json.dumps(config))
    with pytest.raises(FolderRefused, match="holds no weights"):
        read_dense(tmp_path / "empty")
