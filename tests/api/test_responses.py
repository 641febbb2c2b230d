"""Responses serialized by pydantic's core: the same JSON FastAPI would send, options passed through."""

from __future__ import annotations

import json

from app.api.responses import json_response
from app.api.schemas import SimilarityResponse


def test_the_body_is_the_models_json_with_its_options():
    response = json_response(SimilarityResponse(scores=[0.5, 1.0], correction=None), exclude_none=True)
    assert response.media_type == "application/json"
    assert json.loads(response.body) == {"scores": [0.5, 1.0]}
