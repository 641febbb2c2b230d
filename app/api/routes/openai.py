"""OpenAI's embeddings API over the corrected vectors, so existing clients work unchanged."""

from __future__ import annotations

import base64

import numpy as np
from fastapi import APIRouter
from fastapi.responses import Response

from app.api.deps import EmbeddingDep
from app.api.responses import json_response
from app.api.routing import BoundedBodyRoute
from app.api.schemas import EmbeddingItem, EmbeddingsRequest, EmbeddingsResponse, Usage
from app.core.errors import InvalidInput, NotFound

router = APIRouter(prefix="/v1", tags=["openai"], route_class=BoundedBodyRoute)
OWNER = "corrected-embeddings"


def _texts(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if value and all(isinstance(v, str) for v in value):
        return list(value)
    raise InvalidInput("input: token arrays are not accepted; send the text (this model tokenizes it itself)")


@router.post("/embeddings", response_model=EmbeddingsResponse)
async def embeddings(body: EmbeddingsRequest, embedding: EmbeddingDep) -> Response:
    served = embedding.backbone.name
    if body.model != served:
        raise NotFound(f"model {body.model!r} is not served; GET /v1/models lists {served!r}")
    texts = _texts(body.input)
    vectors, _, _ = await embedding.embed_async(texts, dims=body.dimensions)
    if body.encoding_format == "base64":  # what the official client asks for: little-endian float32
        items = [base64.b64encode(np.ascontiguousarray(v, dtype="<f4").tobytes()).decode() for v in vectors]
    else:
        items = vectors.tolist()
    tokens = await embedding.token_count_async(texts)
    response = EmbeddingsResponse(
        data=[EmbeddingItem(index=i, embedding=e) for i, e in enumerate(items)],
        model=served,
        usage=Usage(prompt_tokens=tokens, total_tokens=tokens),
    )
    return json_response(response)


@router.get("/models")
def models(embedding: EmbeddingDep) -> dict:
    return {
        "object": "list",
        "data": [{"id": embedding.backbone.name, "object": "model", "created": 0, "owned_by": OWNER}],
    }
