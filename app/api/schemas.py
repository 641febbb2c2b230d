"""Request and response bodies; strict types and unknown fields refused, so bad input is a 422."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    model_validator,
)

from app.index.filters import Scalar


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("text must not be empty or whitespace only")
    return value


# The pattern only documents the rule for clients and fuzzers; the validator gives the readable error.
Text = Annotated[StrictStr, AfterValidator(_not_blank), WithJsonSchema({"type": "string", "pattern": r"\S"})]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EmbedRequest(Strict):
    texts: list[Text] = Field(min_length=1, description="Texts to embed.")
    corrected: StrictBool = Field(True, description="Apply the fitted correction.")
    normalize: StrictBool = Field(True, description="L2-normalize the returned vectors.")
    truncate: StrictBool = Field(True, description="Cut texts over the token limit (reported); false: 422.")


class EmbedResponse(BaseModel):
    model: str
    correction: str | None = Field(description="Id of the correction artifact the vectors live in.")
    dim: int
    embeddings: list[list[float]]
    truncated: list[int] = Field(description="Indices of the texts cut at the token limit.")


class SimilarityRequest(Strict):
    """Either `pairs`, or one `source` against several `targets`."""

    pairs: list[Annotated[list[Text], Field(min_length=2, max_length=2)]] | None = Field(None, min_length=1)
    source: Text | None = None
    targets: list[Text] | None = Field(None, min_length=1)
    compare_raw: StrictBool = Field(False, description="Also return the uncorrected cosines.")

    @model_validator(mode="after")
    def _one_form(self) -> SimilarityRequest:
        if (self.pairs is None) == (self.source is None and self.targets is None):
            raise ValueError("give either 'pairs', or 'source' with 'targets'")
        if self.pairs is None and (self.source is None or self.targets is None):
            raise ValueError("'source' and 'targets' go together")
        return self


class SimilarityResponse(BaseModel):
    scores: list[float]
    raw_scores: list[float] | None = None
    correction: str | None


class DocumentIn(Strict):
    id: Annotated[StrictStr, Field(min_length=1, max_length=256)] | None = None
    text: Text
    metadata: dict[str, Any] | None = None


class DocumentsRequest(Strict):
    documents: list[DocumentIn] = Field(min_length=1)
    truncate: StrictBool = Field(True, description="Index texts over the token limit by their start; false: 422.")


class DocumentsResponse(BaseModel):
    ids: list[str]
    count: int


class DocumentOut(BaseModel):
    id: str
    text: str
    metadata: dict[str, Any]


class SearchRequest(Strict):
    q: Text = Field(description="The query text.")
    k: int = Field(10, ge=1, description="How many results (at most CE_MAX_K).")
    filter: dict[str, Scalar] | None = Field(
        None, min_length=1, description="Only documents whose metadata has exactly these key/value pairs."
    )
    score_threshold: float | None = Field(None, ge=-1, le=1, description="Drop results with a lower cosine.")


class SearchHitOut(BaseModel):
    id: str
    text: str
    score: float
    metadata: dict[str, Any]


class SearchResponse(BaseModel):
    query: str
    correction: str | None
    results: list[SearchHitOut]


# OpenAI's embeddings API, as its official client sends and reads it.


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
