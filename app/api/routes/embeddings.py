"""/embed and /similarity: vectors and cosines in the served correction's space; /tokenize: what is encoded."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from app.api.deps import EmbeddingDep
from app.api.responses import json_response
from app.api.routing import BoundedBodyRoute
from app.api.schemas import (
    EmbedRequest,
    EmbedResponse,
    SimilarityRequest,
    SimilarityResponse,
    TokenizeRequest,
    TokenizeResponse,
)

router = APIRouter(route_class=BoundedBodyRoute)


@router.post("/embed", response_model=EmbedResponse)
async def embed(body: EmbedRequest, embedding: EmbeddingDep) -> Response:
    vectors, correction, truncated = await embedding.embed_async(
        body.texts,
        corrected=body.corrected,
        normalize=body.normalize,
        truncate=body.truncate,
        space=body.space,
        prompt=embedding.prompt(body.prompt_name, body.prompt),
    )
    response = EmbedResponse(
        model=embedding.backbone.name,
        correction=correction,
        dim=vectors.shape[1],
        embeddings=vectors.tolist(),
        truncated=truncated,
    )
    return json_response(response)


@router.post("/similarity", response_model=SimilarityResponse, response_model_exclude_none=True)
async def similarity(body: SimilarityRequest, embedding: EmbeddingDep) -> Response:
    left, right = body.sides()
    prompt = embedding.prompt(body.prompt_name, body.prompt)
    scores, raw_scores, correction = await embedding.similarity_async(
        left, right, with_raw=body.compare_raw, prompt=prompt
    )
    response = SimilarityResponse(
        scores=scores.tolist(),
        raw_scores=raw_scores.tolist() if body.compare_raw and raw_scores is not None else None,
        correction=correction,
    )
    return json_response(response, exclude_none=True)


@router.post("/tokenize", response_model=TokenizeResponse)
async def tokenize(body: TokenizeRequest, embedding: EmbeddingDep) -> TokenizeResponse:
    """The backbone's tokens for each text, as /embed and /documents see them, with counts before any cut."""
    texts = await embedding.tokenize_async(body.texts)
    return TokenizeResponse(model=embedding.backbone.name, max_length=embedding.backbone.max_length, texts=texts)
