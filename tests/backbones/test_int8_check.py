"""The int8 verdict: kept beside the graph, read back, and a bar on both the cosine and the STS-B figure."""

import pytest

from app.backbones.int8_check import MAX_STS_DROP, MIN_CENTRED_COSINE, Int8Check, read_check, write_check


def test_the_bar_holds_on_the_cosine_and_on_sts():
    good = Int8Check(
        lowest_cosine=MIN_CENTRED_COSINE, mean_cosine=0.99, sts_fp32=80.0, sts_int8=80 - MAX_STS_DROP, texts=3
    )
    assert good.keeps and good.reason.startswith("keeps the model")
    assert not Int8Check(0.9, 0.99, 80.0, 80.0, 3).keeps  # a text too far from its fp32 vector
    assert not Int8Check(0.99, 0.99, 80.0, 78.5, 3).keeps  # the model's figure moved
    assert "falls short" in Int8Check(0.9, 0.99, 80.0, 80.0, 3).reason


def test_a_check_is_kept_beside_its_graph(tmp_path):
    graph = tmp_path / "abc-mean-v4-int8.onnx"
    assert read_check(graph) is None  # made before checks were kept
    check = Int8Check(0.97, 0.99, 80.0, 79.9, 3040)
    write_check(graph, check)
    assert read_check(graph) == check and (tmp_path / "abc-mean-v4-int8.check.json").is_file()
    assert check.summary()["keeps"] is True


@pytest.mark.parametrize("lowest", [-0.36, 0.5])
def test_a_far_int8_graph_is_reported_as_short(lowest):
    assert not Int8Check(lowest, 0.2, 30.0, 30.0, 10).keeps
