"""Bodies of /collections: settings checked where the schema can say it, and a fit's parameters those of its method."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.api.collection_schemas import CollectionIn, FitRequest


def test_a_collection_takes_its_search_settings_and_refuses_out_of_range_ones():
    body = CollectionIn.model_validate({"name": "t", "fusion": "rrf", "lexical_weight": 0.4, "feedback_docs": 3})
    assert (body.fusion, body.lexical_weight, body.feedback_docs) == ("rrf", 0.4, 3)
    for bad in ({"lexical_weight": 1.5}, {"feedback_docs": 21}, {"pooling": "max"}, {"colour": "red"}):
        with pytest.raises(ValidationError):
            CollectionIn.model_validate({"name": "t", **bad})


def test_a_fit_takes_the_parameters_of_its_method_only():
    assert FitRequest.model_validate({"method": "whitening", "alpha": 0.5, "dim": 128}).params() == {
        "alpha": 0.5,
        "dim": 128,
    }
    assert FitRequest.model_validate({}).method == "auto"
    for bad in ({"method": "abtt", "alpha": 0.5}, {"method": "auto", "dim": 8}, {"method": "whitening", "alpha": 2}):
        with pytest.raises(ValidationError):
            FitRequest.model_validate(bad)
