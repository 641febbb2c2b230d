"""The search settings a collection is created with, and the service's defaults for them (CE_SEARCH): one model,
so that the two never drift apart."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from app.core.names import Fusion, LexicalLanguage, SearchMode


class SearchSettings(BaseModel):
    """How search ranks and indexes when a request does not say: the service's (CE_SEARCH) and a collection's own
    (given at its creation); each unset one falls to the next (collection, service, the correction's judgments,
    the documented rule)."""

    model_config = ConfigDict(extra="forbid")

    search_mode: SearchMode | None = Field(
        None, description="dense, lexical (BM25) or hybrid; unset: what `fit --tune-qrels` chose, else hybrid."
    )
    fusion: Fusion | None = Field(
        None, description="Hybrid: calibrated, convex (min-max scaled) or rrf; unset: the tuned one, else calibrated."
    )
    lexical_weight: float | None = Field(
        None, ge=0, le=1, description="Hybrid: the lexical list's weight; unset: the fusion's own (0.7, 0.4, 0.4)."
    )
    feedback_docs: StrictInt | None = Field(
        None, ge=0, le=20, description="Pseudo-relevance feedback: first results the query moves toward; 0: off."
    )
    feedback_weight: float | None = Field(None, gt=0, le=10, description="Feedback: how far toward them; unset: 1.0.")
    lexical_language: LexicalLanguage | None = Field(
        None, description="The lexical index's stemmer and stop words (Snowball languages, or none); unset: english."
    )
    lexical_stopwords: StrictBool | None = Field(None, description="Drop the language's stop words; unset: true.")
    index_probe: StrictInt | None = Field(
        None, ge=1, le=65_536, description="nprobe (IVF) or efSearch (HNSW) over the calibrated one."
    )
    index_rerank: StrictInt | None = Field(
        None, ge=1, le=10_000, description="Candidates a compressed index re-scores exactly; unset: calibrated."
    )
