"""What one process holds: the store, the encoders, the collections; the default collection is one of them."""

from __future__ import annotations

from app.services.container import Services
from app.services.on_collection import OnCollection


def test_the_default_collection_is_wired_like_any_and_the_shortcuts_are_its_services(make_settings):
    services = Services.from_settings(make_settings(backbone="hashing"))
    try:
        default = services.collections.default
        assert services.default is default.services and services.search is default.services.search
        assert services.served is default.services.served and services.documents is default.services.documents
        assert isinstance(services.documents, OnCollection) and services.documents.collection_key == (
            services.backbone.fingerprint
        )  # the default collection's documents live under its backbone's fingerprint, as they always have
        assert services.readiness() == {"store": True, "encoder": True}
        info = services.info()
        assert info["backbone"]["name"] == "hashing" and info["index"]["shards"] is None
        assert [c["name"] for c in services.collections.describe_all()] == ["default"]
    finally:
        services.close()
    assert not services.engine.alive  # closing the process closes the default collection's encoder too
