"""Correction artifacts in Redis: versioned blobs per backbone fingerprint, and which one is current."""

from __future__ import annotations

import time
from typing import cast

from app.store.calls import KeyedStore, blob, store_call, text


class ArtifactStore(KeyedStore):
    """Moves artifact bytes; the `current` pointer moves in the same transaction as a new version."""

    def _key(self, fingerprint: str, suffix: str) -> str:
        return self.owned_key("artifact", fingerprint, suffix)

    @store_call
    def put(self, fingerprint: str, artifact_id: str, data: bytes, *, make_current: bool) -> None:
        """Write the blob and its version entry, then (same transaction) move the `current` pointer."""
        pipe = self.client.pipeline(transaction=True)
        pipe.set(self._key(fingerprint, f"v:{artifact_id}"), data)
        pipe.zadd(self._key(fingerprint, "versions"), {artifact_id: time.time()})
        if make_current:
            pipe.set(self._key(fingerprint, "current"), artifact_id)
        pipe.execute()

    @store_call
    def get(self, fingerprint: str, artifact_id: str) -> bytes | None:
        return blob(self.client.get(self._key(fingerprint, f"v:{artifact_id}")))

    @store_call
    def current_id(self, fingerprint: str) -> str | None:
        value = self.client.get(self._key(fingerprint, "current"))
        return text(value) if value is not None else None

    @store_call
    def versions(self, fingerprint: str) -> list[str]:
        """Artifact ids for this backbone, oldest first."""
        # ZRANGE without scores answers the members alone
        versions = cast(list[bytes], self.client.zrange(self._key(fingerprint, "versions"), 0, -1))
        return [text(v) for v in versions]

    @store_call
    def delete(self, fingerprint: str, artifact_id: str) -> bool:
        """Drop a version (never the one `current` names); False if it is current or unknown."""
        if self.current_id(fingerprint) == artifact_id:
            return False
        pipe = self.client.pipeline(transaction=True)
        pipe.delete(self._key(fingerprint, f"v:{artifact_id}"))
        pipe.zrem(self._key(fingerprint, "versions"), artifact_id)
        return bool(pipe.execute()[0])
