"""An upgraded default collection that starts empty says where its earlier documents are."""

import logging

from app.services.collections.legacy import say_where_legacy_documents_are
from app.store.documents import DocumentRecord


def test_documents_under_the_folder_named_key_are_counted_and_logged(store, caplog):
    store.documents.put("old-key", [DocumentRecord(f"d{i}", "text", "{}", b"") for i in range(3)])
    with caplog.at_level(logging.WARNING):
        assert say_where_legacy_documents_are(store, "new-key", "old-key") == 3
    assert "3 documents stored before fingerprints went by content are under old-key" in caplog.text
    assert say_where_legacy_documents_are(store, "new-key", None) == 0  # a folder whose vectors changed: none
    store.documents.put("new-key", [DocumentRecord("n", "text", "{}", b"")])
    assert say_where_legacy_documents_are(store, "new-key", "old-key") == 0  # it has documents of its own
