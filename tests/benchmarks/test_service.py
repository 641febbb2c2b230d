"""What `bench` prints from its figures (the run itself is tested end to end in tests/cli/test_benchmarks.py)."""

from __future__ import annotations

from app.benchmarks.service import RUNTIMES, bench_lines


def pattern(rate: float) -> dict[str, float]:
    return {
        "sentences_per_s": rate,
        "ratio_to_limit": 1.5,
        "ratio_to_sentence_transformers": 1.8,
        "p50_ms": 40.0,
        "p99_ms": 90.0,
        "errors": 0,
    }


def test_the_lines_give_the_limit_each_pattern_and_the_single_text_figures():
    result = {
        "cpu": {"model": "Test CPU", "int8_instructions": ["avx2"]},
        "limit_batch_size": 64,
        "limit_sentences_per_s": 812.4,
        "sentence_transformers_per_s": 640.0,
        "limits_by_runtime": {f"{r}_{q}": 500.0 for r, q in RUNTIMES},
        "a_8_clients_x_8_texts": pattern(1210.0),
        "b_32_clients_x_1_text": pattern(990.0),
        "single_text_p50_ms": 3.1,
        "single_text_in_process_ms": 2.0,
        "single_text_ratio": 1.55,
        "single_text_beside_long_texts_p50_ms": 5.0,
        "correction_share_of_encoding": 0.01,
        "server_peak_rss_mb": 700.0,
    }
    lines = bench_lines(result)
    assert lines.pop(0) == "CPU: Test CPU; int8 instructions: avx2"
    assert (
        lines[0] == "limit (in-process, batch 64): 812 sentences/s; sentence-transformers in-process: 640 sentences/s"
    )
    assert lines[1] == "in-process limit of each runtime: huggingface_none 500/s, onnx_none 500/s, onnx_int8 500/s"
    assert lines[2].startswith("a_8_clients_x_8_texts: 1210 sentences/s = 1.50 x limit = 1.80 x sentence-transformers")
    assert lines[3].startswith("b_32_clients_x_1_text: 990 sentences/s")
    assert "= 1.55x" in lines[4] and lines[5] == "correction: 0.01 of encoding time; peak RSS 700 MB"
