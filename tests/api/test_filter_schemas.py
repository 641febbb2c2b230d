"""The filter field: what the schema publishes of the filter language, and the language's check as its validator."""

import pytest
from pydantic import BaseModel, ValidationError

from app.api.filter_schemas import FILTER_SCHEMA, MetadataFilter


class Body(BaseModel):
    filter: MetadataFilter


def test_the_schema_states_the_shape_and_the_validator_the_rules():
    assert FILTER_SCHEMA["maxProperties"] == 32 and set(FILTER_SCHEMA["properties"]) == {"$and", "$or", "$not"}
    assert "$in" in FILTER_SCHEMA["additionalProperties"]["anyOf"][1]["properties"]
    assert Body(filter={"year": {"$gte": 2020}}).filter == {"year": {"$gte": 2020}}
    with pytest.raises(ValidationError, match=r"\$gte at year"):
        Body(filter={"year": {"$gte": [1]}})
    with pytest.raises(ValidationError, match="at most 32 items"):
        Body(filter={f"k{i}": i for i in range(33)})
