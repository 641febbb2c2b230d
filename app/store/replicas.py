"""Where each replica is in a collection's change log: a trim never passes a live replica's position."""

from __future__ import annotations

import re

from app.store.calls import KeyedStore, store_call, text
from app.store.keys import parts_of


class ReplicaPositions(KeyedStore):
    """Each replica's applied change-log entry under a key that expires unless the replica reports again."""

    def _key(self, collection_key: str, replica: str) -> str:
        return self.owned_key("changes", collection_key, "at", replica)

    def _keys(self, collection_key: str) -> list[bytes]:
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", self._key(collection_key, "")) + "*"
        return list(self.client.scan_iter(match=pattern, count=100))

    @store_call
    def report(self, collection_key: str, replica: str, applied: str, ttl: float) -> None:
        """A replica's applied change-log entry, kept `ttl` seconds: while it lives, no trim passes it."""
        self.client.set(self._key(collection_key, replica), applied, px=max(1, int(ttl * 1000)))

    @store_call
    def live(self, collection_key: str) -> list[str]:
        """The positions replicas reported and that have not expired."""
        keys = self._keys(collection_key)
        return [text(v) for v in self.client.mget(keys) if v is not None] if keys else []

    @store_call
    def forget(self, collection_key: str, replica: str) -> None:
        self.client.delete(self._key(collection_key, replica))

    @store_call
    def drop(self, collection_key: str) -> None:
        for part in {collection_key, *parts_of(collection_key)}:
            if keys := self._keys(part):
                self.client.delete(*keys)
