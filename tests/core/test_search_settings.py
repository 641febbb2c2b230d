"""One model of the search settings: the service's CE_SEARCH and a collection's own are checked alike."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.core.config import Settings
from app.core.search_settings import SearchSettings


def test_ce_search_is_read_as_a_json_object_of_the_collection_keys(monkeypatch):
    monkeypatch.setenv("CE_SEARCH", '{"fusion": "convex", "lexical_weight": 0.3, "lexical_language": "german"}')
    search = Settings().search
    assert (search.fusion, search.lexical_weight, search.lexical_language) == ("convex", 0.3, "german")
    assert search.search_mode is None and search.index_probe is None


@pytest.mark.parametrize(
    "given",
    [{"fusion": "max"}, {"lexical_weight": 1.5}, {"feedback_docs": 2.5}, {"index_probe": 0}, {"stopwords": True}],
)
def test_a_bad_or_unknown_key_is_refused(given):
    with pytest.raises(ValidationError):
        SearchSettings(**given)


def test_a_bad_ce_search_stops_the_start(monkeypatch):
    monkeypatch.setenv("CE_SEARCH", '{"fuson": "rrf"}')
    with pytest.raises(ValidationError, match="fuson"):
        Settings()
