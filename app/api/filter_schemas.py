"""The filter a route takes, as the request schema states it: its shape in JSON Schema (what clients and fuzzers
read), and the filter language's own check (index/metadata_filter) as the field's validator."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, WithJsonSchema

from app.api.json_input import loads
from app.api.schemas import MAX_FILTER_KEYS
from app.core.errors import InvalidInput
from app.index.metadata_filter import MAX_LIST, MAX_PATH, Filter, FilterError, parse


def filter_in_url(raw: str) -> Filter:
    """A filter sent as JSON in a URL (GET /search, GET /documents): read and checked as a body's filter is."""
    try:
        return parse(loads(raw, "filter"))
    except FilterError as exc:
        raise InvalidInput(f"filter: {exc}") from None


def _valid_filter(value: dict[str, Any]) -> dict[str, Any]:
    try:
        parse(value)
    except FilterError as exc:
        raise ValueError(str(exc)) from None
    return value


FILTER_DESCRIPTION = (
    "Only documents whose metadata passes this filter: MongoDB's operators ($eq $ne $in $nin $gt $gte $lt $lte "
    '$exists $and $or $not) on dotted paths into nested metadata, a list field matching any of its values: {"lang": '
    '"en", "year": {"$gte": 2020}, "$or": [{"tags": "faq"}, {"author.name": {"$in": ["Ada", "Bo"]}}]}.'
)
# The filter language (index/metadata_filter) checks operators, paths and values; the schema states its shape.
_SCALAR = {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}]}
_LIST = {"type": "array", "minItems": 1, "maxItems": MAX_LIST, "items": _SCALAR}
_ORDERED = {"anyOf": [{"type": "string"}, {"type": "number"}]}
_OPERATORS = {
    "type": "object",
    "minProperties": 1,
    "additionalProperties": False,
    "properties": {
        **dict.fromkeys(("$eq", "$ne"), _SCALAR),
        **dict.fromkeys(("$gt", "$gte", "$lt", "$lte"), _ORDERED),
        **dict.fromkeys(("$in", "$nin"), _LIST),
        "$exists": {"type": "boolean"},
        "$not": {"type": "object", "minProperties": 1},
    },
}
_FILTERS = {"type": "array", "minItems": 1, "items": {"type": "object", "minProperties": 1}}
FILTER_SCHEMA = {
    "type": "object",
    "minProperties": 1,
    "maxProperties": MAX_FILTER_KEYS,
    "properties": {"$and": _FILTERS, "$or": _FILTERS, "$not": {"type": "object", "minProperties": 1}},
    "propertyNames": {"pattern": r"^(\$(and|or|not)|[^$.][^.]*(\.[^.]+)*)$", "maxLength": MAX_PATH},
    "additionalProperties": {"anyOf": [_SCALAR, _OPERATORS]},
}
MetadataFilter = Annotated[dict[str, Any], AfterValidator(_valid_filter), WithJsonSchema(FILTER_SCHEMA)]
