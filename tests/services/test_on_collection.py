"""What the documents and search services share: one collection's store keys, served index and encoder."""

from __future__ import annotations

from types import SimpleNamespace

from app.services.on_collection import OnCollection


def test_a_service_works_on_the_served_index_s_collection_key():
    served = SimpleNamespace(collection_key="collection:t:abc")
    service = OnCollection(store="the store", served=served, embedding="the encoder")
    assert (service.store, service.collection_key) == ("the store", "collection:t:abc")
    assert service._served is served and service._embedding == "the encoder"
