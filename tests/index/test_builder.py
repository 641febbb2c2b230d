"""Writes by another process reach this one's index through the change log."""

from __future__ import annotations

from app.services.container import Services
from app.services.search_query import SearchQuery
from tests.index.test_live import docs, wait_until


def test_writes_by_another_process_reach_the_index(settings):
    server = Services.from_settings(settings)
    writer = Services.from_settings(settings)  # e.g. `python -m app index` while the server runs
    try:
        writer.documents.add(docs(30))
        writer.documents.delete("d3")
        wait_until(lambda: len(server.index) == 29)
        assert "d3" not in server.index and "d4" in server.index
        assert server.search.search(SearchQuery(docs(1, start=7)[0].text, k=1)).hits[0].id == "d7"
    finally:
        writer.close()
        server.close()
