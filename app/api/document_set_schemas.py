"""A collection's documents as a set: listed a page at a time, counted, read, deleted and re-labelled many at once,
by ids or by a filter."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, StrictBool, StrictStr, model_validator

from app.api.filter_schemas import FILTER_DESCRIPTION, MetadataFilter
from app.api.schemas import MAX_ITEMS, DocumentOut, Metadata, Strict

DocumentId = Annotated[StrictStr, Field(min_length=1, max_length=256)]
Ids = Annotated[list[DocumentId], Field(min_length=1, max_length=MAX_ITEMS)]
MAX_PAGE = 1000


class DocumentPage(BaseModel):
    documents: list[DocumentOut] = Field(description="In id order.")
    next_cursor: str | None = Field(description="Send it as `cursor` for the next page; None after the last.")


class CountRequest(Strict):
    filter: MetadataFilter | None = Field(None, description=FILTER_DESCRIPTION)


class CountResponse(BaseModel):
    count: int


class IdsRequest(Strict):
    ids: Ids


class DocumentsFound(BaseModel):
    documents: list[DocumentOut] = Field(description="Those found, in the order asked.")
    missing: list[str] = Field(description="The ids asked for that no document has.")


class DeleteRequest(Strict):
    ids: Ids | None = None
    filter: MetadataFilter | None = Field(None, description=FILTER_DESCRIPTION)

    @model_validator(mode="after")
    def _one_of(self) -> DeleteRequest:
        if (self.ids is None) == (self.filter is None):
            raise ValueError("send ids or filter, one of them")
        return self


class DeleteResponse(BaseModel):
    deleted: int = Field(description="Documents that existed and are gone.")


class MetadataIn(Strict):
    id: DocumentId
    metadata: Metadata


class MetadataRequest(Strict):
    documents: list[MetadataIn] = Field(
        min_length=1, max_length=MAX_ITEMS, description="An id given twice takes its last metadata, as adding does."
    )
    merge: StrictBool = Field(
        False, description="Merge into the stored metadata (top-level keys) instead of replacing."
    )

    def updates(self) -> dict[str, dict[str, Any]]:
        return {doc.id: doc.metadata for doc in self.documents}


class MetadataResponse(BaseModel):
    ids: list[str]
