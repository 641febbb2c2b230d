"""Judgments as the API takes them: a query, a document id and a grade from 0 to 10; anything else a 422."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.api.judgment_schemas import MAX_GRADE, JudgmentsIn


def test_grades_up_to_ten_are_taken():
    body = JudgmentsIn.model_validate({"judgments": [{"query": "paper stuck", "id": "t1", "grade": MAX_GRADE}]})
    assert body.judgments[0].grade == 10


@pytest.mark.parametrize(
    "judgment",
    [
        {"query": "q", "id": "t1", "grade": 11},
        {"query": "q", "id": "t1", "grade": -1},
        {"query": "q", "id": "t1", "grade": 1.5},
        {"query": " ", "id": "t1", "grade": 1},
        {"query": "q", "id": "", "grade": 1},
        {"query": "q", "id": "t1", "grade": 1, "weight": 2},
    ],
)
def test_anything_else_is_refused(judgment):
    with pytest.raises(ValidationError):
        JudgmentsIn.model_validate({"judgments": [judgment]})
