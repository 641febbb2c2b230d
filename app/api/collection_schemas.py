"""Bodies of /collections: what a collection is made with and described as, and a fit's request and status."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, model_validator

from app.api.deps import NAME_PATTERN
from app.api.openapi import exclusive_forms, served
from app.api.schemas import Strict
from app.core.names import Method
from app.core.search_settings import SearchSettings
from app.index.factory_grammar import FORMS
from app.index.factory_grammar import PATTERN as FACTORY_PATTERN

CORRECTION_PATTERN = rf"^(auto|none|({'|'.join(m for m in Method if m != Method.AUTO)})-[0-9a-f]{{12}})$"


def published_pattern(pattern: str, description: str, **limits: Any) -> Any:
    """An optional string whose pattern is published, not checked here: the service's own check says why (422)."""
    return Field(None, json_schema_extra={"pattern": pattern}, description=description, **limits)


class CollectionMade(Strict):
    """What a new collection is made with: its name, backbone, correction, index and parts."""

    name: StrictStr = Field(  # published; the service checks it (422) as it checks every other setting
        description="Unique; `default` is the service's own.", json_schema_extra={"pattern": NAME_PATTERN}
    )
    backbone: Literal["onnx", "huggingface", "hashing"] | None = Field(
        None,
        description="Default: CE_BACKBONE; others as CE_COLLECTION_BACKBONES allows.",
        json_schema_extra=served(enum="backbones"),
    )
    pooling: Literal["mean", "cls", "first_last_avg", "embedding_avg"] | None = Field(
        None, description="Default: CE_POOLING."
    )
    correction: StrictStr | None = published_pattern(
        CORRECTION_PATTERN,
        "auto (the backbone's current or bundled correction, the default), none, or an artifact id kept in Redis "
        "for its backbone.",
    )
    index_factory: StrictStr | None = published_pattern(
        FACTORY_PATTERN,
        f"Default: CE_INDEX_FACTORY. One of {FORMS}; HNSW's M within 4 to 128, IVF's lists within 1 to 65,536, "
        "PQ's m dividing the backbone's dimension. One that needs training serves exactly until it can be trained.",
        max_length=200,
    )
    model_path: StrictStr | None = Field(
        None,
        max_length=1024,
        description="A local Hugging Face folder CE_COLLECTION_MODELS lists (not with hashing); default the service's.",
        json_schema_extra=served(enum="models"),
    )
    shards: StrictInt = Field(
        0,
        ge=0,
        le=64,
        description="Keep the collection in this many parts, each in its own Redis slot and searched (dense and "
        "lexical, BM25 with the whole collection's statistics) by a shard of its own on Ray; 0: whole, here. At "
        "most CE_MAX_COLLECTION_SHARDS.",
        json_schema_extra=served(maximum="max_collection_shards"),
    )


class CollectionIn(SearchSettings, CollectionMade):
    """A new collection: what it is made with, then its search settings (unset: CE_SEARCH's), in that order."""


class CollectionOut(SearchSettings):
    model_config = ConfigDict(extra="ignore")  # a description: what the service adds is not refused

    name: str
    backbone: str
    pooling: str
    correction: str | None
    index_factory: str
    created_at: str
    model_path: str | None = None
    fingerprint: str = Field(description="Its backbone's; empty while it is loading.")
    state: Literal["loading", "ready", "failed"] = Field(
        description="loading: created before its backbone loaded (its routes answer 503 with Retry-After); failed: "
        "its backbone or settings could not serve (see `error`; delete it and create it again)."
    )
    requested_correction: str | None = Field(None, description="While loading: the correction asked for.")
    error: str | None = Field(None, description="Failed: why.")
    opening: dict[str, Any] | None = Field(None, description="While it opens in this process: its step and seconds.")
    open: bool = Field(description="Open in this process; one that is not is listed without loading its backbone.")
    shards: int = Field(0, description="The parts it is kept in, each searched by a shard on Ray; 0: whole, here.")
    documents: int
    dim: int | None = None
    search_space: dict[str, Any] | None = None
    index: dict[str, Any] | None = None
    model: dict[str, Any] | None = Field(
        None, description="Its model as served: pooling, length, heads, prompts, and where each choice came from."
    )


PARAMS_OF = {Method.WHITENING: ("alpha", "dim", "eps", "drop"), Method.ABTT: ("drop",)}  # the others take none


class FitRequest(Strict):
    """One of three forms: auto, center or none alone; whitening with its parameters; abtt with `drop`."""

    model_config = ConfigDict(
        json_schema_extra=exclusive_forms(
            ([], ["method"], {"method": {"enum": ["auto", "center", "none"]}}),
            (["method"], ["alpha", "dim", "eps", "drop"], {"method": {"const": "whitening"}}),
            (["method"], ["drop"], {"method": {"const": "abtt"}, "drop": {"minimum": 1}}),
        )
    )

    method: Literal["auto", "whitening", "center", "abtt", "none"] = Field(
        "auto", description="auto: the collection's own fit only if labelled pairs show it beats the general one."
    )
    alpha: float | None = Field(None, ge=0, le=1, description="whitening: eigenvalue power.")
    dim: int | None = Field(None, ge=1, le=4096, description="whitening: output dims kept.")
    eps: float | None = Field(None, ge=0, le=1, description="whitening: shrink eigenvalues toward their mean.")
    drop: int | None = Field(None, ge=0, le=64, description="whitening: top directions skipped; abtt: removed (>= 1).")

    @model_validator(mode="after")
    def _params_of_its_method(self) -> FitRequest:
        taken = PARAMS_OF.get(Method(self.method), ())
        stray = [k for k, v in self.params().items() if k not in taken]
        if stray:
            raise ValueError(f"{', '.join(stray)}: not a parameter of {self.method}")
        if Method(self.method) is Method.ABTT and self.drop == 0:
            raise ValueError("abtt removes at least one direction: drop >= 1")
        return self

    def params(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump(exclude={"method"}).items() if v is not None}


class FitStatus(BaseModel):
    collection: str
    state: Literal["running", "done", "failed"]
    args: list[str]
    started_at: float
    progress: dict[str, Any] | None = None
    correction: str | None = Field(None, description="When done: the correction it published (or kept).")
    log: list[str]


class CollectionList(BaseModel):
    collections: list[CollectionOut]
