"""bench-depth on a small collection over real HTTP: a p50 for each mode and k, with its ratio to k = 10."""

from app.benchmarks import depth
from tests.conftest import ROOT, serve_app


def test_every_mode_and_depth_has_a_p50_and_a_ratio(make_settings):
    from app.main import create_app

    with serve_app(create_app(make_settings(backbone="hashing", max_k=1000, max_texts=256))) as client:
        figures = depth.measure(str(client.base_url), ROOT / "datasets" / "stsbenchmark", 1000, 5)
    assert figures["documents"] == 1000 and figures["queries"] == 5
    for mode in depth.MODES:
        assert set(figures["p50_ms"][mode]) == set(depth.DEPTHS) and figures["vs_k10"][mode][10] == 1.0
        assert all(ms > 0 for ms in figures["p50_ms"][mode].values())
