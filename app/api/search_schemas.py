"""/search's request and answer: the query, how to rank and page it, and each hit with what ranked it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, model_validator

from app.api.document_set_schemas import DocumentId
from app.api.filter_schemas import FILTER_DESCRIPTION, MetadataFilter
from app.api.openapi import served
from app.api.schemas import Strict, Text
from app.core.names import Fusion, SearchMode
from app.index.fusion import MAX_CANDIDATES, MAX_FEEDBACK_DOCS, MAX_FEEDBACK_WEIGHT, MAX_RRF_K
from app.index.metadata_filter import parse
from app.services.search_query import Diversity, SearchQuery, VectorSpace

Weight = Annotated[float, Field(strict=True, ge=0, le=1)]  # a number, not a boolean
RrfK = Annotated[StrictInt, Field(ge=1, le=MAX_RRF_K)]
Depth = Annotated[StrictInt, Field(ge=1, le=MAX_CANDIDATES)]
Offset = Annotated[StrictInt, Field(ge=0)]  # offset + k at most 10 times CE_MAX_K: checked by the search
# How a request may rank and page: the POST form's fields and the GET form's query parameters say the same.
DESCRIBE = {
    "mode": "dense, lexical (BM25) or hybrid (both fused); default: the collection's (see `ranking`).",
    "fusion": "Hybrid: calibrated (each list weighed by what it has to say for the query), convex (min-max scaled "
    "scores) or rrf (reciprocal ranks); default: the collection's.",
    "lexical_weight": "Hybrid: the lexical list's weight in [0, 1]; default: the fusion's own.",
    "rrf_k": "rrf: the rank constant k in 1 / (k + rank); default 60.",
    "candidates": f"Hybrid: how deep each list is read and fused, the window (1 to {MAX_CANDIDATES}); default 300. "
    "Past it, documents follow the dense list's order at rank_score 0.",
    "offset": "Skip this many results: page n (from 0) of size k is offset n*k; offset + k at most "
    "10 times CE_MAX_K. Every page is cut from one ranking, so pages concatenated equal one deep request.",
    "cursor": "The previous page's next_cursor: the page after it, of this request's k (instead of offset).",
    "explain": "Add to each hit its rank and score in each list and what the fused score took from each.",
    "include_vectors": "Add to each hit its best passage's vector in the search space.",
    "mmr": 'Maximal marginal relevance: {"lambda": 0.5, "fetch_k": 50} re-orders the first fetch_k results so each '
    "next one is relevant (its cosine, weighed by lambda) and unlike those before it (1 - lambda); lambda 1 keeps "
    "the ranking's order.",
    "like": "More like this stored document (its id): the mean of its passages' vectors is the dense query and its "
    "text the lexical one (with q, q's text is), ranked as any query is; the document itself is left out. Not with "
    "vector.",
    "feedback": 'Pseudo-relevance feedback: {"docs": m, "weight": beta} moves the query vector toward the first m '
    "results' best passages (Rocchio) and searches the dense index again; false turns it off; default: the "
    "collection's, and for a search like a document 3 at weight 1.",
}


class FeedbackIn(Strict):
    docs: Annotated[StrictInt, Field(ge=1, le=MAX_FEEDBACK_DOCS)] = Field(description="First results moved toward.")
    weight: Annotated[float, Field(strict=True, gt=0, le=MAX_FEEDBACK_WEIGHT)] = Field(
        1.0, description="How far toward their mean vector."
    )


class MmrIn(Strict):
    lambda_: Weight = Field(0.5, alias="lambda", description="Relevance's weight against diversity's.")
    fetch_k: Depth = Field(50, description="Results re-ordered (the page's own included).")


MAX_VECTOR = 4096


class SearchRequest(Strict):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [{"required": ["q"]}, {"required": ["vector"]}, {"required": ["like"]}],
            "not": {"required": ["vector", "like"]},
        },
    )

    q: Text | None = Field(None, description="The query text; leave it out to search by `vector` alone.")
    vector: list[float] | None = Field(
        None,
        min_length=1,
        max_length=MAX_VECTOR,
        description="Search by this vector (its dense list; with `q` too, the lexical list is the text's).",
    )
    like: DocumentId | None = Field(None, description=DESCRIBE["like"])
    vector_space: VectorSpace = Field(
        "search",
        description="search: the vector is in the collection's search space (as `include_vectors` returns them); "
        "raw: the backbone's own (as /embed returns them with corrected and normalize false), mapped by the server.",
    )
    k: StrictInt = Field(
        10, ge=1, description="How many results (at most CE_MAX_K).", json_schema_extra=served(maximum="max_k")
    )
    filter: MetadataFilter | None = Field(None, description=FILTER_DESCRIPTION)
    score_threshold: float | None = Field(None, ge=-1, le=1, description="Drop results with a lower cosine.")
    mode: SearchMode | None = Field(None, description=DESCRIBE["mode"])
    fusion: Fusion | None = Field(None, description=DESCRIBE["fusion"])
    lexical_weight: Weight | None = Field(None, description=DESCRIBE["lexical_weight"])
    rrf_k: RrfK | None = Field(None, description=DESCRIBE["rrf_k"])
    candidates: Depth | None = Field(None, description=DESCRIBE["candidates"])
    offset: Offset = Field(0, description=DESCRIBE["offset"])
    cursor: str | None = Field(None, min_length=1, max_length=1024, description=DESCRIBE["cursor"])
    explain: StrictBool = Field(False, description=DESCRIBE["explain"])
    feedback: FeedbackIn | Literal[False] | None = Field(None, description=DESCRIBE["feedback"])
    mmr: MmrIn | None = Field(None, description=DESCRIBE["mmr"])
    include_vectors: StrictBool = Field(False, description=DESCRIBE["include_vectors"])

    @model_validator(mode="after")
    def _within_depth(self) -> SearchRequest:
        if self.like is not None and self.vector is not None:
            raise ValueError("like and vector both name the dense query: send one")
        if self.q is None and self.vector is None and self.like is None:
            raise ValueError("send q (a text), vector, both, or like (a stored document's id)")
        if self.cursor is not None and self.offset:
            raise ValueError("send offset or cursor, not both: the cursor says where the page starts")
        return self

    def query(self) -> SearchQuery:
        """The one typed query the search path reads."""
        ranking = self.model_dump(mode="json", include={"mode", "fusion", "lexical_weight", "rrf_k", "candidates"})
        if self.feedback is False:
            ranking["feedback_docs"] = 0
        elif self.feedback is not None:
            ranking |= {"feedback_docs": self.feedback.docs, "feedback_weight": self.feedback.weight}
        return SearchQuery(
            text=self.q,
            k=self.k,
            vector=None if self.vector is None else np.asarray(self.vector, dtype=np.float32),
            vector_space=self.vector_space,
            filter=None if self.filter is None else parse(self.filter),
            score_threshold=self.score_threshold,
            offset=self.offset,
            explain=self.explain,
            include_vectors=self.include_vectors,
            diversity=Diversity(self.mmr.lambda_, self.mmr.fetch_k) if self.mmr else None,
            like=self.like,
            **ranking,
        )


class PassageOut(BaseModel):
    start: int = Field(description="Character offset of the passage in the document's text.")
    end: int
    text: str


class DenseRank(BaseModel):
    rank: int = Field(description="Rank in the dense list (1 = best).")
    cosine: float


class LexicalRank(BaseModel):
    rank: int = Field(description="Rank in the lexical list (1 = best).")
    bm25: float
    coverage: float | None = Field(None, description="Share of the query's term weight (idf) the document holds.")


class FusedParts(BaseModel):
    dense: float = Field(description="What the fused score took from the dense list.")
    lexical: float = Field(description="What it took from the lexical list; the two sum to rank_score.")


class HitExplanation(BaseModel):
    dense: DenseRank | None = Field(description="None: not among the dense list's candidates.")
    lexical: LexicalRank | None = Field(description="None: not among the lexical list's candidates.")
    fused: FusedParts | None = Field(description="Hybrid mode only.")


class SearchHitOut(BaseModel):
    id: str
    text: str
    score: float = Field(description="Cosine of the document's best passage with the query, in the search space.")
    rank_score: float = Field(description="What ordered the results: the cosine, BM25, or the fused score.")
    lexical_score: float | None = Field(None, description="BM25, when the lexical list had this document.")
    passage: PassageOut | None = Field(None, description="For a document of several passages: the best one.")
    metadata: dict[str, Any]
    explain: HitExplanation | None = Field(None, description="Asked with `explain`.")
    vector: list[float] | None = Field(None, description="Asked with `include_vectors`: the best passage's.")


class Confidence(BaseModel):
    dense: float = Field(description="How far the best cosine stands in the collection's range (0 to 1).")
    lexical: float = Field(description="How much of the query's term weight the best lexical match holds (0 to 1).")


class RankingOut(BaseModel):
    mode: SearchMode
    fusion: Fusion | None = Field(None, description="Hybrid: how the two lists were fused.")
    lexical_weight: float | None = Field(None, description="Hybrid: the lexical list's weight.")
    chosen_by: str = Field(description="request, settings, the judgments it was tuned on, or the documented rule.")
    rrf_k: int | None = Field(None, description="rrf: its rank constant.")
    candidates: int = Field(description="How deep each list was read before fusing.")
    feedback: dict[str, Any] | None = Field(
        None, description="Feedback when on: docs, weight, and (after a search) `from`, the documents moved toward."
    )
    confidence: Confidence | None = Field(None, description="Hybrid, asked with `explain`: what calibrated weighs by.")


class SearchSpaceOut(BaseModel):
    shared_with_similarity: bool = Field(description="True: search uses the space /embed and /similarity serve.")
    method: str = Field(description="The map from the backbone's vectors to the searched ones.")
    params: dict[str, Any] = {}
    dim: int
    rule: str | None = Field(None, description="Why this space: the rule that chose it.")


class SearchResponse(BaseModel):
    query: str | None = Field(description="The query text (None for a search by vector alone, or `like`).")
    like: str | None = Field(None, description="The stored document searched like, when asked.")
    correction: str | None = Field(description="Id of the correction artifact; it holds the search space too.")
    search_space: SearchSpaceOut
    ranking: RankingOut
    results: list[SearchHitOut]
    partial: bool = Field(
        False,
        description="True: some shards of the index did not answer (`missing_shards`); their documents are not "
        "among the results. Retry for a whole answer.",
    )
    missing_shards: list[int] = Field([], description="The shards (CE_SHARDS) that did not answer in time.")
    next_cursor: str | None = Field(
        None, description="Send it as `cursor` (with the same query) for the next page; None after the last page."
    )
    collection_changed: bool = Field(
        False,
        description="True: the collection changed since the cursor's page was cut, so this page is cut from the "
        "ranking as it is now and may repeat or skip a document of the earlier pages.",
    )
