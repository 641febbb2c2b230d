"""Collections in Redis: each one's settings, as bytes under its name."""

from __future__ import annotations

from collections.abc import Callable

import redis

from app.store.calls import Client, blob, store_call, text


class CollectionStore:
    """Moves a collection's settings as bytes; knows nothing of what they mean."""

    def __init__(self, client: Client, prefix: str):
        self.client = client
        self._key = f"{prefix}:collections"

    @store_call
    def create(self, name: str, spec: bytes) -> bool:
        """Store a new collection's settings; False when the name is taken (one of two racing creators wins)."""
        return bool(self.client.hsetnx(self._key, name, spec))

    @store_call
    def get(self, name: str) -> bytes | None:
        return blob(self.client.hget(self._key, name))

    @store_call
    def all(self) -> dict[str, bytes]:
        return {text(k): blob(v) for k, v in self.client.hgetall(self._key).items()}

    @store_call
    def take(self, name: str) -> bytes | None:
        """Remove a collection's settings and return them, in one transaction (None if there were none)."""
        with self.client.pipeline(transaction=True) as pipe:
            pipe.hget(self._key, name)
            pipe.hdel(self._key, name)
            data: bytes | None = pipe.execute()[0]
        return data

    @store_call
    def update(self, name: str, change: Callable[[bytes], bytes]) -> bool:
        """Replace a collection's settings with `change(old)` unless it was deleted meanwhile (then False)."""
        with self.client.pipeline(transaction=True) as pipe:  # a cluster watches only in a transaction's pipeline
            while True:
                try:
                    pipe.watch(self._key)
                    old = blob(pipe.hget(self._key, name))
                    if old is None:
                        return False
                    pipe.multi()
                    pipe.hset(self._key, name, change(old))
                    pipe.execute()
                    return True
                except redis.WatchError:  # another collection changed at the same moment: read again
                    continue
