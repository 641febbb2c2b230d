"""The lines of an export, as an import checks them: a collection line first, then its correction, its documents
and an end line. Published under application/x-ndjson as the array of its lines."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StrictInt, StrictStr

from app.api.collection_schemas import CollectionIn
from app.api.schemas import Metadata, Strict, Text
from app.core.stored_vectors import DTYPES
from app.services.documents import MAX_ID_LENGTH


class CollectionLine(CollectionIn):
    """What the collection was made with (as POST /collections takes it) and the backbone its vectors come from."""

    kind: Literal["collection"]
    format: Literal[1]
    fingerprint: StrictStr = Field(description="The backbone's: equal here, vectors are kept, else texts encoded.")
    dim: StrictInt = Field(ge=1, le=65_536, description="The backbone's raw vectors' dimension.")


class CorrectionLine(Strict):
    kind: Literal["correction"]
    artifact: StrictStr = Field(description="The correction artifact it served, base64 (served here if it fits).")


class DocumentLine(Strict):
    kind: Literal["document"]
    id: StrictStr = Field(min_length=1, max_length=MAX_ID_LENGTH, pattern="^[^\x1f]+$")
    text: Text
    metadata: Metadata = Field(default_factory=dict)
    passages: StrictStr = Field("", description="Its passages' character spans as JSON; empty: one passage.")
    dtype: Literal[DTYPES] = "float32"  # type: ignore[valid-type]  # a Literal of a tuple constant: pydantic reads it
    vectors: StrictStr = Field("", description="Its raw vectors (one per passage), base64 of `dtype`.")


class EndLine(Strict):
    kind: Literal["end"]
    documents: StrictInt = Field(ge=0)


Line = Annotated[CollectionLine | CorrectionLine | DocumentLine | EndLine, Field(discriminator="kind")]


def _collection_first(schema: dict[str, Any]) -> None:
    schema["prefixItems"] = [{"$ref": "#/components/schemas/CollectionLine"}]


# The body: its lines, the first of them the collection's (checked by the route, published as prefixItems).
ImportBody = Annotated[list[Line], Field(min_length=1, json_schema_extra=_collection_first)]
