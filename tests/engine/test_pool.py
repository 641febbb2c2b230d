"""The encoders of one process: beyond CE_MAX_BACKBONES the least recently used one no request uses is unloaded."""

from __future__ import annotations

from app.services.container import Services
from app.services.documents import DocumentInput
from app.services.search_query import SearchQuery
from tests.services.collections.test_manager import text

WORDS = "cat dog bird plane river city park night joy rain sun tree house road car boat".split()


def test_beyond_max_backbones_the_least_recently_used_one_no_request_uses_is_unloaded(make_settings):
    services = Services.from_settings(make_settings(backbone="hashing", max_backbones=2))
    try:
        collections = services.collections
        collections.create("a", pooling="cls", correction="none")
        a = collections.get("a")
        a.services.documents.add([DocumentInput(text=text("a", i), id=f"a{i}") for i in range(10)])
        with a.using():  # a request is using it: its backbone stays, even beyond the limit
            collections.create("b", pooling="first_last_avg", correction="none")
            assert len(services.engines.loaded()) == 3 and collections.opened("a") is a
        collections.create("c", pooling="embedding_avg", correction="none")
        # a (cls) and b (first_last_avg) are idle and least recently used: unloaded with their collections
        assert services.engines.loaded() == [("hashing", "mean", None), ("hashing", "embedding_avg", None)]
        assert collections.opened("a") is None and collections.opened("b") is None
        again = collections.get("a")  # its next request reopens it, its backbone loaded again
        assert again.services.documents.count() == 10
        assert again.services.search.search(SearchQuery(text("a", 3), k=1)).hits[0].id == "a3"
        assert services.info()["backbones_loaded"] == ["hashing/mean", "hashing/cls"]  # c's unloaded in turn
    finally:
        services.close()
