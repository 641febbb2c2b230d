"""bench-int8 builds each quantized form of a graph and measures speed, agreement with fp32 and batch independence."""

from app.backbones.onnx import OnnxBackbone
from app.benchmarks.int8_forms import run
from app.benchmarks.model_folders import RECIPES, build, texts


def test_every_form_is_measured_and_the_served_one_is_batch_independent(tmp_path):
    folder = build(RECIPES[0], tmp_path)  # BERT: its int8 check holds, so its int8 graph is served
    OnnxBackbone(folder, cache_dir=tmp_path / "graphs", quantize="none")
    backbone = OnnxBackbone(folder, cache_dir=tmp_path / "graphs", quantize="int8")
    (tmp_path / "work").mkdir()
    result = run(backbone, texts() * 20, tmp_path / "work")
    forms = {f["form"]: f for f in result["forms"]}
    assert list(forms) == ["fp32", "int8, fixed scales (served)", "int8, dynamic", "int8, static QDQ"]
    assert forms["fp32"]["lowest_centred_cosine_to_fp32"] == 1.0 and forms["fp32"]["batch_independence"] == 1.0
    assert forms["int8, fixed scales (served)"]["batch_independence"] >= 0.999999
    assert all(f["sentences_per_s"] > 0 for f in forms.values()) and "int8_instructions" in result["cpu"]
