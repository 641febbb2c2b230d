"""OpenAI's embeddings API over the corrected vectors, so existing clients work unchanged."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.api.access import requester
from app.api.deps import ServicesDep, open_collection
from app.api.responses import json_response
from app.api.routing import BoundedBodyRoute
from app.api.schemas import EmbeddingItem, EmbeddingsRequest, EmbeddingsResponse, Usage
from app.backbones.prompts import prompted
from app.core.errors import InvalidInput, NotFound
from app.services.collections.spec import DEFAULT
from app.services.container import Services
from app.services.embedding import EmbeddingService

router = APIRouter(prefix="/v1", tags=["openai"], route_class=BoundedBodyRoute)
OWNER = "corrected-embeddings"


def _texts(value: str | list[str] | list[int] | list[list[int]]) -> list[str]:
    if isinstance(value, str):
        return [value]
    texts = [v for v in value if isinstance(v, str)]
    if value and len(texts) == len(value):
        return texts
    raise InvalidInput("input: token arrays are not accepted; send the text (this model tokenizes it itself)")


@asynccontextmanager
async def _embedding_for(services: Services, model: str) -> AsyncIterator[EmbeddingService]:
    """The default model by its name, or a collection (its backbone, pooling and correction) by its name."""
    if model == services.backbone.name:
        yield services.embedding
        return
    try:
        collection = await open_collection(services, model)
    except NotFound:
        raise NotFound(f"model {model!r} is not served; GET /v1/models lists what is") from None
    with collection.using() as opened:
        yield opened.embedding


@router.post("/embeddings", response_model=EmbeddingsResponse)
async def embeddings(body: EmbeddingsRequest, services: ServicesDep) -> Response:
    async with _embedding_for(services, body.model) as embedding:
        return await _embed(embedding, body)


async def _embed(embedding: EmbeddingService, body: EmbeddingsRequest) -> Response:
    texts = _texts(body.input)
    step = embedding.settings.max_texts  # a request of OpenAI's size goes through the encoder CE_MAX_TEXTS at a time
    prompt = embedding.prompt(body.prompt_name, body.prompt)
    parts = [
        await embedding.embed_async(texts[i : i + step], dims=body.dimensions, prompt=prompt)
        for i in range(0, len(texts), step)
    ]
    vectors = np.vstack([part[0] for part in parts])
    if body.encoding_format == "base64":  # what the official client asks for: little-endian float32
        items = [base64.b64encode(np.ascontiguousarray(v, dtype="<f4").tobytes()).decode() for v in vectors]
    else:
        items = vectors.tolist()
    tokens = await embedding.token_count_async(prompted(prompt, texts))  # what the model read
    response = EmbeddingsResponse(
        data=[EmbeddingItem(index=i, embedding=e) for i, e in enumerate(items)],
        model=body.model,
        usage=Usage(prompt_tokens=tokens, total_tokens=tokens),
    )
    return json_response(response)


@router.get("/models")
def models(services: ServicesDep, request: Request) -> dict[str, Any]:
    """The default model, then every collection by name: each embeds with its own backbone and correction; a key
    limited to some collections is shown those alone (the default model is the default collection)."""
    key = requester(request)
    named = [(services.backbone.name, DEFAULT)] + [(n, n) for n in services.collections.names()]
    ids = [i for i, collection in named if key is None or key.covers(collection)]
    return {"object": "list", "data": [{"id": i, "object": "model", "created": 0, "owned_by": OWNER} for i in ids]}
