"""The typed query: a filter's JSON parsed once (a bad one refused there), a vector made one row, the ranking's
fields read together, and the depth a page with MMR needs."""

import numpy as np
import pytest

from app.index.metadata_filter import AllOf, Condition, FilterError
from app.services.search_query import RANKING_FIELDS, Diversity, SearchQuery


def test_a_query_parses_its_filter_and_shapes_its_vector_once():
    query = SearchQuery("heron", filter={"lang": "en", "year": {"$gte": 2020}}, vector=[0.5, 0.5])
    assert query.filter == AllOf((Condition("lang", "$eq", "en"), Condition("year", "$gte", 2020)))
    assert query.vector.shape == (1, 2) and query.vector.dtype == np.float32
    with pytest.raises(FilterError, match=r"\$gt at x"):
        SearchQuery("heron", filter={"x": {"$gt": [1]}})


def test_the_ranking_fields_travel_together_and_mmr_widens_the_depth():
    query = SearchQuery("heron", k=5, offset=10, mode="hybrid", lexical_weight=0.3)
    assert set(query.asked()) == set(RANKING_FIELDS) and query.asked()["lexical_weight"] == 0.3
    assert query.wanted == 15 and SearchQuery("x", k=5, diversity=Diversity(0.5, 40)).wanted == 40
    assert "vector" not in query.describe() and query.describe()["mode"] == "hybrid"


def test_filters_equal_as_python_values_are_told_apart_by_their_repr():
    """False == 0 in Python, so two filters of them were equal (and hashed alike) as keys of a filter's labels."""
    boolean, number = SearchQuery("x", filter={"b": False}).filter, SearchQuery("x", filter={"b": 0}).filter
    assert boolean == number and repr(boolean) != repr(number)
