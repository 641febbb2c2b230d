"""Documents a default collection kept before fingerprints went by content (they named the model folder then)."""

from __future__ import annotations

import logging

from app.store.redis_store import RedisStore

log = logging.getLogger(__name__)


def say_where_legacy_documents_are(store: RedisStore, key: str, legacy: str | None) -> int:
    """When the default collection starts empty and its folder-named key holds documents, log how many and where
    (and how to bring them over); returns that count."""
    if legacy is None or legacy == key or store.documents.count(key):
        return 0
    found = store.documents.count(legacy)
    if found:
        log.warning(
            "the default collection is empty; %d documents stored before fingerprints went by content are under %s "
            "(the folder's name was part of it): export them with the version that wrote them and import them here "
            "(python -m app export / import); corrections fitted then need `python -m app fit`",
            found,
            legacy,
        )
    return found
