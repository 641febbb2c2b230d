"""Request and response bodies; strict types and unknown fields refused, so bad input is a 422."""

from __future__ import annotations

import math
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
from pydantic.config import JsonDict

from app.api.openapi import exclusive_forms, served
from app.core.config import MAX_REQUEST_ITEMS
from app.core.metadata_limits import MAX_METADATA_BYTES, MAX_METADATA_DEPTH, MAX_METADATA_KEYS, metadata_fault
from app.index.metadata_filter import MAX_KEYS as MAX_FILTER_OBJECT_KEYS
from app.services.collections.spec import NAME


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("text must not be empty or whitespace only")
    return value


# The pattern only documents the rule for clients and fuzzers; the validator gives the readable error.
Text = Annotated[
    StrictStr,
    AfterValidator(_not_blank),
    WithJsonSchema({"type": "string", "pattern": r"\S", **served(maxLength="max_text_chars")}),
]

# Hard bounds in the schema, whatever the settings (CE_MAX_TEXTS, at most this, is checked after): a body of
# many tiny items or of deep metadata is refused whole, and the bounds are published in the OpenAPI schema.
MAX_ITEMS = MAX_REQUEST_ITEMS
MAX_FILTER_KEYS = MAX_FILTER_OBJECT_KEYS  # the filter language's own bound, published


def _bounded_metadata(value: dict[str, Any]) -> dict[str, Any]:
    if (fault := metadata_fault(value)) is not None:
        raise ValueError(fault)
    return value


Metadata = Annotated[dict[str, Any], AfterValidator(_bounded_metadata)]


SCHEMA_BOUNDS = {
    "max_items": MAX_ITEMS,
    "max_filter_keys": MAX_FILTER_KEYS,
    "max_metadata_keys": MAX_METADATA_KEYS,
    "max_metadata_depth": MAX_METADATA_DEPTH,
    "max_metadata_bytes": MAX_METADATA_BYTES,
}


PER_REQUEST = served(maxItems="max_texts")  # CE_MAX_TEXTS, at most MAX_ITEMS


def unfit_value(value: Any, path: tuple[Any, ...] = ()) -> tuple[tuple[Any, ...], str] | None:
    """Where a parsed JSON body holds what no field may: a lone surrogate in a string or key (JSON's `\\ud800` escape
    parses into one; it is not Unicode text and cannot be stored or tokenized), or NaN or Infinity (Python's JSON
    reader takes them; the JSON answer could not carry them back)."""
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return path, "holds a lone surrogate (an unpaired \\ud800-\\udfff escape), which is not Unicode text"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else (path, f"is {value}; numbers must be finite")
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if (found := unfit_value(key, (*path, key)) if isinstance(key, str) else None) is not None:
            return found
        if (found := unfit_value(item, (*path, key))) is not None:
            return found
    return None


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _json_values_only(cls, data: Any) -> Any:
        if (found := unfit_value(data)) is not None:
            path, why = found
            where = ".".join(str(p).encode(errors="backslashreplace").decode() for p in path)  # a key may hold it
            raise ValueError(f"{where or 'body'} {why}")
        return data


MAX_PROMPT_CHARS = 1024


class PromptChoice(Strict):
    """Which of the model's prompts goes before every text, as sentence-transformers and text-embeddings-inference
    name them: `prompt_name` (GET /info lists the model's) or a literal `prompt`; neither: the model's default."""

    prompt_name: Annotated[StrictStr, Field(min_length=1, max_length=64)] | None = Field(
        None, description="One of the model's prompts, e.g. query or document (GET /info lists them)."
    )
    prompt: Annotated[StrictStr, Field(max_length=MAX_PROMPT_CHARS)] | None = Field(
        None, description="A literal prefix put before every text, instead of a named prompt."
    )

    @model_validator(mode="after")
    def _one_prompt(self) -> PromptChoice:
        if self.prompt_name is not None and self.prompt is not None:
            raise ValueError("give prompt_name or prompt, not both")
        return self


class EmbedRequest(PromptChoice):
    texts: list[Text] = Field(
        min_length=1, max_length=MAX_ITEMS, description="Texts to embed.", json_schema_extra=PER_REQUEST
    )
    corrected: StrictBool = Field(True, description="Apply the fitted correction.")
    normalize: StrictBool = Field(True, description="L2-normalize the returned vectors.")
    truncate: StrictBool = Field(True, description="Cut texts over the token limit (reported); false: 422.")
    space: Literal["similarity", "search"] = Field(
        "similarity",
        description="similarity: the space /similarity compares in; search: the one the collection's index searches "
        "(what POST /search takes as `vector` and returns with `include_vectors`). With corrected false: raw.",
    )


class TokenizeRequest(Strict):
    texts: list[Text] = Field(
        min_length=1, max_length=MAX_ITEMS, description="Texts to tokenize.", json_schema_extra=PER_REQUEST
    )


class TokenizedText(BaseModel):
    tokens: list[str] = Field(description="What the backbone encodes: special tokens included, cut at max_length.")
    ids: list[int] = Field(description="The tokens' ids in the backbone's vocabulary.")
    count: int = Field(description="Tokens of the whole text, before any cut (what the request budgets count).")
    truncated: bool = Field(description="Over max_length: /embed cuts it; a document is split into passages.")


class TokenizeResponse(BaseModel):
    model: str
    max_length: int
    texts: list[TokenizedText]


class EmbedResponse(BaseModel):
    model: str
    correction: str | None = Field(description="Id of the correction artifact the vectors live in.")
    dim: int
    embeddings: list[list[float]]
    truncated: list[int] = Field(description="Indices of the texts cut at the token limit.")


class SimilarityRequest(PromptChoice):
    """Either `pairs`, or one `source` against several `targets`."""

    model_config = ConfigDict(
        json_schema_extra=exclusive_forms(
            (["pairs"], ["compare_raw"], None), (["source", "targets"], ["compare_raw"], None)
        )
    )

    pairs: list[Annotated[list[Text], Field(min_length=2, max_length=2)]] | None = Field(
        None, min_length=1, max_length=MAX_ITEMS, json_schema_extra=PER_REQUEST
    )
    source: Text | None = None
    targets: list[Text] | None = Field(None, min_length=1, max_length=MAX_ITEMS, json_schema_extra=PER_REQUEST)
    compare_raw: StrictBool = Field(False, description="Also return the uncorrected cosines.")

    @model_validator(mode="after")
    def _one_form(self) -> SimilarityRequest:
        if (self.pairs is None) == (self.source is None and self.targets is None):
            raise ValueError("give either 'pairs', or 'source' with 'targets'")
        if self.pairs is None and (self.source is None or self.targets is None):
            raise ValueError("'source' and 'targets' go together")
        return self

    def sides(self) -> tuple[list[str], list[str]]:
        """The texts compared, left and right, in either form."""
        if self.pairs is not None:
            return [p[0] for p in self.pairs], [p[1] for p in self.pairs]
        targets = self.targets or []
        return [self.source or ""] * len(targets), list(targets)


class SimilarityResponse(BaseModel):
    scores: list[float]
    raw_scores: list[float] | None = None
    correction: str | None


class DocumentIn(Strict):
    id: Annotated[StrictStr, Field(min_length=1, max_length=256)] | None = None
    text: Text
    metadata: Metadata | None = Field(
        None,
        description=f"At most {MAX_METADATA_KEYS} keys, {MAX_METADATA_DEPTH} levels deep, {MAX_METADATA_BYTES} "
        "bytes as JSON.",
    )


class DocumentsRequest(Strict):
    documents: list[DocumentIn] = Field(min_length=1, max_length=MAX_ITEMS, json_schema_extra=PER_REQUEST)
    truncate: StrictBool = Field(
        True,
        deprecated=True,
        description="Ignored: a text over the backbone's window is split into passages, every one indexed.",
    )


class DocumentsResponse(BaseModel):
    ids: list[str]
    count: int


class DocumentOut(BaseModel):
    id: str
    text: str
    metadata: dict[str, Any]


# OpenAI's embeddings API, as its official client sends and reads it.


OPENAI_MAX_INPUTS = 2048  # OpenAI's own bound: its clients batch up to it (LangChain's OpenAIEmbeddings sends 1,000)


def _accepted_forms(schema: JsonDict) -> None:
    """Publish the two forms accepted, not the token arrays parsed only to be refused with a clear message."""
    forms = schema["anyOf"]
    if isinstance(forms, list):
        schema["anyOf"] = forms[:2]


class EmbeddingsRequest(PromptChoice):
    input: (
        Text
        | Annotated[list[Text], Field(min_length=1, max_length=OPENAI_MAX_INPUTS)]
        | Annotated[list[StrictInt], Field(max_length=MAX_ITEMS)]
        | Annotated[list[list[StrictInt]], Field(max_length=MAX_ITEMS)]
    ) = Field(
        description=f"A text or a list of up to {OPENAI_MAX_INPUTS} texts, as OpenAI takes them (encoded CE_MAX_TEXTS "
        "at a time); token arrays are refused: the backbone has its own tokenizer.",
        json_schema_extra=_accepted_forms,
    )
    model: StrictStr = Field(
        description="The served model's id, or a collection's name: GET /v1/models lists them.",
        json_schema_extra={
            "anyOf": [{"type": "string", **served(enum="model")}, {"type": "string", "pattern": f"^{NAME.pattern}$"}]
        },
    )
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
