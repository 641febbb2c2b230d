"""Input files: both pairs layouts, corpora, documents, and errors that name the line."""

import pytest

from app.offline.datasets import DataFileError, read_corpus, read_documents, read_pairs


def test_sts_benchmark_layout(tmp_path):
    f = tmp_path / "sts.csv"
    f.write_text("genre\tsrc\tyear\t0001\t5.000\ta plane .\tan air plane .\ng\ts\ty\t2\t1.5\tx\ty\n")
    pairs = read_pairs(f)
    assert pairs.left == ["a plane .", "x"] and pairs.right == ["an air plane .", "y"]
    assert pairs.scores.tolist() == [5.0, 1.5]


def test_three_column_layout_and_corpus_uses_both_sides(tmp_path):
    f = tmp_path / "pairs.tsv"
    f.write_text("a cat\ta kitten\t4.2\nrain\tsun\t0.5\n")
    assert read_pairs(f).scores.tolist() == [4.2, 0.5]
    assert read_corpus(f) == ["a cat", "rain", "a kitten", "sun"]


def test_plain_corpus_skips_blank_lines(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("first sentence\n\n  second one  \n")
    assert read_corpus(f) == ["first sentence", "second one"]


def test_errors_name_file_and_line(tmp_path):
    f = tmp_path / "bad.tsv"
    f.write_text("a\tb\t1\nc\td\tnot-a-number\n")
    with pytest.raises(DataFileError, match=r"bad.tsv:2: score 'not-a-number'"):
        read_pairs(f)
    with pytest.raises(DataFileError, match="file not found"):
        read_pairs(tmp_path / "missing.tsv")
    f.write_text("only one column\n")
    with pytest.raises(DataFileError, match=r":1: expected 3"):
        read_pairs(f)


def test_documents_jsonl_and_plain(tmp_path):
    f = tmp_path / "docs.jsonl"
    f.write_text('{"id": "x1", "text": "hello", "metadata": {"lang": "en"}}\nplain text line\n{"text": "no id"}\n')
    docs = read_documents(f)
    assert [(d.id, d.text, d.metadata) for d in docs] == [
        ("x1", "hello", {"lang": "en"}),
        (None, "plain text line", None),
        (None, "no id", None),
    ]
    f.write_text('{"text": "ok"}\n{"text": ""}\n')
    with pytest.raises(DataFileError, match=r"docs.jsonl:2: a JSON line needs"):
        read_documents(f)
    f.write_text('{"text": "ok"\n')
    with pytest.raises(DataFileError, match=r"docs.jsonl:1: invalid JSON"):
        read_documents(f)
