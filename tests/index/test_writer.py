"""A writer's index (`python -m app index`): it indexes nothing, and a server sees its writes through the change
log."""

from __future__ import annotations

from app.index.writer import WriterIndex
from app.services.container import Services
from app.services.documents import DocumentInput
from app.services.search_query import SearchQuery
from tests.index.test_live import wait_until


def test_a_writer_stores_without_indexing_and_a_server_follows_its_writes(settings):
    writer = Services.from_settings(settings, search=False)
    server = Services.from_settings(settings)
    try:
        assert isinstance(writer.served, WriterIndex) and writer.served.integrity is None
        writer.documents.add([DocumentInput("a heron waits by the river", "h")])
        assert len(writer.served.current.dense) == 0 and writer.documents.count() == 1  # stored, not indexed here
        wait_until(lambda: "h" in server.index)
        assert server.search.search(SearchQuery("heron by the river", k=1)).hits[0].id == "h"
    finally:
        writer.close()
        server.close()
