"""A /search cursor: an offset that names its query and the state its pages were cut from."""

import pytest

from app.api.search_cursor import SearchCursor, query_digest
from app.core.errors import InvalidInput


def test_a_cursor_reads_back_for_its_own_query_only():
    digest = query_digest({"q": "cat", "k": 10, "offset": 20, "mode": "hybrid"})
    assert digest == query_digest({"q": "cat", "k": 3, "mode": "hybrid", "cursor": "x"})  # paging fields aside
    assert digest != query_digest({"q": "cat", "mode": "lexical"})
    token = SearchCursor(30, digest, "17-0").token()
    assert SearchCursor.read(token, digest) == SearchCursor(30, digest, "17-0")
    with pytest.raises(InvalidInput, match="another query"):
        SearchCursor.read(token, query_digest({"q": "dog"}))


@pytest.mark.parametrize("token", ["%%%", "e30=", "bnVsbA==", SearchCursor(-1, "d", "s").token()])
def test_a_token_that_is_not_a_cursor_is_a_422(token):
    with pytest.raises(InvalidInput, match="not a next_cursor"):
        SearchCursor.read(token, "d")
