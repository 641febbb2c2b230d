"""OpenAI's embeddings API over the corrected vectors, so existing clients work unchanged."""

from __future__ import annotations

import base64
from typing import Annotated, Literal

import numpy as np
from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import BaseModel, Field, StrictInt, StrictStr

from app.api.deps import ServiceDep
from app.api.schemas import Strict, Text
from app.core.errors import InvalidInput, NotFound

router = APIRouter(prefix="/v1", tags=["openai"])
OWNER = "corrected-embeddings"


class EmbeddingsRequest(Strict):
    input: Text | Annotated[list[Text], Field(min_length=1)] | list[StrictInt] | list[list[StrictInt]] = Field(
        description="A text or a list of texts (token arrays are refused: the backbone has its own tokenizer)."
    )
    model: StrictStr = Field(description="The served model's id, as /v1/models lists it.")
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: StrictInt | None = Field(None, ge=1, description="Keep the first k whitened dims (k <= served dim).")
    user: StrictStr | None = None


class EmbeddingItem(BaseModel):
    object: Literal["embedding"] = "embedding"
    index: int
    embedding: list[float] | str


class Usage(BaseModel):
    prompt_tokens: int
    total_tokens: int


class EmbeddingsResponse(BaseModel):
    object: Literal["list"] = "list"
    data: list[EmbeddingItem]
    model: str
    usage: Usage


def _texts(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if value and all(isinstance(v, str) for v in value):
        return list(value)
    raise InvalidInput("input: token arrays are not accepted; send the text (this model tokenizes it itself)")


@router.post("/embeddings", response_model=EmbeddingsResponse)
async def embeddings(body: EmbeddingsRequest, service: ServiceDep) -> Response:
    if body.model != service.backbone.name:
        raise NotFound(f"model {body.model!r} is not served; GET /v1/models lists {service.backbone.name!r}")
    texts = _texts(body.input)
    vectors, _, _ = await service.embed_async(texts, dims=body.dimensions)
    if body.encoding_format == "base64":  # what the official client asks for: little-endian float32
        items = [base64.b64encode(np.ascontiguousarray(v, dtype="<f4").tobytes()).decode() for v in vectors]
    else:
        items = vectors.tolist()
    tokens = service.token_count(texts)
    response = EmbeddingsResponse(
        data=[EmbeddingItem(index=i, embedding=e) for i, e in enumerate(items)],
        model=service.backbone.name,
        usage=Usage(prompt_tokens=tokens, total_tokens=tokens),
    )
    return Response(response.model_dump_json(), media_type="application/json")


@router.get("/models")
def models(service: ServiceDep) -> dict:
    return {
        "object": "list",
        "data": [{"id": service.backbone.name, "object": "model", "created": 0, "owned_by": OWNER}],
    }
