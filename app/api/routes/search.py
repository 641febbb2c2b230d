"""/search: the query in the URL (GET) or in a JSON body (POST), the same search either way."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import ValidationError

from app.api.deps import SearchDep
from app.api.json_input import loads
from app.api.openapi import json_parameter, served
from app.api.routing import BoundedBodyRoute
from app.api.search_cursor import SearchCursor, query_digest
from app.api.search_schemas import DESCRIBE, PassageOut, SearchHitOut, SearchRequest, SearchResponse, SearchSpaceOut
from app.core.errors import InvalidInput
from app.core.names import Fusion, SearchMode
from app.index.fusion import MAX_CANDIDATES, MAX_RRF_K
from app.services.search import SearchService
from app.services.search_query import max_search_depth

router = APIRouter(route_class=BoundedBodyRoute)
# The GET form's `filter` is the POST form's, as JSON in the URL.
FILTER_SCHEMA = next(
    b for b in SearchRequest.model_json_schema()["properties"]["filter"]["anyOf"] if b["type"] != "null"
)
MMR_SCHEMA = SearchRequest.model_json_schema()["$defs"]["MmrIn"]
FEEDBACK_SCHEMA = {
    "oneOf": [
        {"type": "boolean", "const": False},
        {
            "type": "object",
            "properties": {
                "docs": {"type": "integer", "minimum": 1},
                "weight": {"type": "number", "exclusiveMinimum": 0},
            },
            "required": ["docs"],
        },
    ]
}


async def _search(service: SearchService, body: SearchRequest) -> SearchResponse:
    digest = query_digest(body.model_dump(mode="json"))
    cursor = SearchCursor.read(body.cursor, digest) if body.cursor is not None else None
    query = body.query() if cursor is None else replace(body.query(), offset=cursor.offset)
    found = await service.search_async(query)
    after = query.offset + len(found.hits)
    more = len(found.hits) == query.k and after < max_search_depth(service.settings.max_k)
    return SearchResponse(
        next_cursor=SearchCursor(after, digest, found.state).token() if more else None,
        collection_changed=cursor is not None and cursor.state != found.state,
        query=body.q,
        like=body.like,
        correction=found.space["correction"],
        search_space=SearchSpaceOut(**found.space),
        ranking=found.ranking,
        partial=bool(found.missing_shards),
        missing_shards=found.missing_shards,
        results=[
            SearchHitOut(
                id=h.id,
                text=h.text,
                score=h.score,
                rank_score=h.rank_score,
                lexical_score=h.lexical_score,
                passage=PassageOut(start=h.passage[0], end=h.passage[1], text=h.text[slice(*h.passage)])
                if h.passage
                else None,
                metadata=h.metadata,
                explain=h.explanation,
                vector=h.vector,
            )
            for h in found.hits
        ],
    )


@router.get("/search", response_model=SearchResponse)
async def search(
    service: SearchDep,
    request: Request,
    q: Annotated[
        str,
        Query(
            min_length=1,
            pattern=r"\S",
            description="The query text.",
            json_schema_extra=served(maxLength="max_text_chars"),
        ),
    ],
    like: Annotated[
        str | None, Query(min_length=1, max_length=256, description=DESCRIBE["like"] + " Alone: POST /search.")
    ] = None,
    k: Annotated[
        int, Query(ge=1, description="How many results (at most CE_MAX_K).", json_schema_extra=served(maximum="max_k"))
    ] = 10,
    filter: Annotated[
        str | None,
        Query(
            description='Metadata to match exactly, as a JSON object: {"lang": "en"}.',
            json_schema_extra=json_parameter(FILTER_SCHEMA),
        ),
    ] = None,
    score_threshold: Annotated[
        float | None, Query(ge=-1, le=1, description="Drop results with a lower cosine.")
    ] = None,
    mode: Annotated[SearchMode | None, Query(description=DESCRIBE["mode"])] = None,
    fusion: Annotated[Fusion | None, Query(description=DESCRIBE["fusion"])] = None,
    # the bounds the body's fields declare, declared here too: the schema says what is refused
    lexical_weight: Annotated[float | None, Query(ge=0, le=1, description=DESCRIBE["lexical_weight"])] = None,
    rrf_k: Annotated[int | None, Query(ge=1, le=MAX_RRF_K, description=DESCRIBE["rrf_k"])] = None,
    candidates: Annotated[int | None, Query(ge=1, le=MAX_CANDIDATES, description=DESCRIBE["candidates"])] = None,
    offset: Annotated[
        int, Query(ge=0, description=DESCRIBE["offset"], json_schema_extra=served(maximum="max_search_depth"))
    ] = 0,
    cursor: Annotated[str | None, Query(min_length=1, max_length=1024, description=DESCRIBE["cursor"])] = None,
    explain: Annotated[bool, Query(description=DESCRIBE["explain"])] = False,
    feedback: Annotated[
        str | None,
        Query(
            description=DESCRIBE["feedback"] + " As JSON in the URL.", json_schema_extra=json_parameter(FEEDBACK_SCHEMA)
        ),
    ] = None,
    mmr: Annotated[
        str | None,
        Query(description=DESCRIBE["mmr"] + " As JSON in the URL.", json_schema_extra=json_parameter(MMR_SCHEMA)),
    ] = None,
    include_vectors: Annotated[bool, Query(description=DESCRIBE["include_vectors"])] = False,
) -> SearchResponse:
    asked = {name: value for name, value in locals().items() if name not in ("service", "request")}  # the body's
    unknown = sorted(set(request.query_params) - set(asked))
    if unknown:  # a parameter that changes nothing is said, not ignored (searches take the model's query prompt)
        raise InvalidInput(f"unknown search parameter {unknown[0]!r}; GET /search takes {', '.join(sorted(asked))}")
    for in_json in ("filter", "feedback", "mmr"):  # read as a body is: the same limits, the same 422s
        asked[in_json] = loads(asked[in_json], in_json) if asked[in_json] is not None else None
    try:
        body = SearchRequest(**asked)
    except ValidationError as exc:
        raise InvalidInput(f"invalid search parameters: {_first_error(exc)}") from None
    return await _search(service, body)


@router.post("/search", response_model=SearchResponse)
async def search_post(body: SearchRequest, service: SearchDep) -> SearchResponse:
    """The same search with the query in a JSON body (long queries, filters without URL encoding), or by vector."""
    return await _search(service, body)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    return f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
