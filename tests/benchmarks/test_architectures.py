"""bench-architectures measures each architecture against sentence-transformers and prints the page's table."""

from app.benchmarks.architectures import row, table
from app.benchmarks.model_folders import RECIPES


def test_a_row_measures_each_runtime_against_sentence_transformers(tmp_path):
    measured = row(RECIPES[0], tmp_path)  # BERT, CLS pooling, a Dense head: its int8 check holds (the page's table)
    assert measured["fused"] and measured["torch"] >= 0.99999 and measured["onnx_fp32"] >= 0.99999
    assert measured["served"] == "onnxruntime-int8" and measured["int8_lowest_centred_cosine"] == 0.9899
    lines = table([measured])
    assert lines[0].startswith("| architecture |") and lines[2].startswith("| bert | yes | ")
