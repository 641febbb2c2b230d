"""An import's rules, decided on its lines alone (the service-level tests in test_backup.py write them)."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from app.core.errors import Conflict, InvalidInput
from app.services.collections.import_checks import check_lines, check_settings, checked_record
from app.services.collections.spec import CollectionSpec

HEAD = {"kind": "collection", "backbone": "hashing", "pooling": "mean", "index_factory": "auto"}


def doc(i: str, text: str = "a text", values=None) -> dict:
    vectors = np.ones(4, dtype="<f4") if values is None else np.asarray(values, dtype="<f4")
    return {
        "kind": "document",
        "id": i,
        "text": text,
        "metadata": {},
        "passages": "",
        "dtype": "float32",
        "vectors": base64.b64encode(vectors.tobytes()).decode(),
    }


@pytest.mark.parametrize(
    ("lines", "reason"),
    [
        ([HEAD, doc("a"), doc("a")], "line 3: document 'a' again (first on line 2)"),
        ([HEAD, doc("a", "x" * 11)], "line 2: document 'a' has 11 characters, at most 10"),
        ([HEAD, doc("a"), {"kind": "end", "documents": 2}], "the end line counts 2 documents; the import holds 1"),
        ([HEAD, {"kind": "end", "documents": 0}, doc("a")], "line 2: the end line comes last"),
        ([HEAD, {"kind": "correction"}, {"kind": "correction"}], "an import holds one correction line, this one 2"),
    ],
)
def test_lines_that_break_a_rule_are_refused_naming_the_line(lines, reason):
    with pytest.raises(InvalidInput, match=reason.replace("(", r"\(").replace(")", r"\)")):
        check_lines(lines, max_text_chars=10)


def test_lines_that_keep_the_rules_pass():
    check_lines([HEAD, doc("a"), doc("b"), {"kind": "end", "documents": 2}], max_text_chars=10)
    check_lines([HEAD, doc("a")], max_text_chars=10)  # a part of an export: no end line


def test_vectors_must_be_finite_non_zero_and_of_the_dimension():
    assert checked_record(doc("a"), 4).id == "a"
    for values, reason in [
        ([1, np.nan, 1, 1], "NaN or infinite"),
        ([0, 0, 0, 0], "a vector of zeros"),
        ([1, 1], "8 bytes of float32 for 1 passages"),
    ]:
        with pytest.raises(InvalidInput, match=reason):
            checked_record(doc("a", values=values), 4)


def test_settings_stated_otherwise_are_named():
    spec = CollectionSpec("c", "hashing", "mean", None, "auto", fusion="rrf")
    check_settings({**HEAD, "fusion": "rrf", "lexical_weight": None}, spec)
    with pytest.raises(Conflict, match=r"pooling 'cls' \(it has 'mean'\); fusion 'convex' \(it has 'rrf'\)"):
        check_settings({**HEAD, "pooling": "cls", "fusion": "convex"}, spec)
