"""The set operations' bodies: a delete names ids or a filter (one of them); a re-labelling takes an id's last
metadata."""

import pytest
from pydantic import ValidationError

from app.api.document_set_schemas import DeleteRequest, MetadataRequest


def test_a_delete_takes_ids_or_a_filter_and_a_relabelling_an_ids_last_metadata():
    assert DeleteRequest(ids=["a"]).filter is None and DeleteRequest(filter={"n": {"$gt": 1}}).ids is None
    with pytest.raises(ValidationError, match="one of them"):
        DeleteRequest(ids=["a"], filter={"n": 1})
    with pytest.raises(ValidationError, match=r"\$gt at n"):
        DeleteRequest(filter={"n": {"$gt": [1]}})
    body = MetadataRequest(documents=[{"id": "a", "metadata": {"k": 1}}, {"id": "b", "metadata": {}}])
    assert body.updates() == {"a": {"k": 1}, "b": {}} and body.merge is False
    twice = MetadataRequest(documents=[{"id": "a", "metadata": {}}, {"id": "a", "metadata": {"k": 2}}])
    assert twice.updates() == {"a": {"k": 2}}  # the last one, as POST /documents keeps a repeated id's last version
