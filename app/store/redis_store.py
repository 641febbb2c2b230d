"""Moves bytes to and from Redis: correction artifacts, documents and their raw vectors."""

from __future__ import annotations

import functools
import json
import logging
import re
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import redis

from app.core.errors import StoreUnavailable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Change:
    """One entry of a space's change log: documents written (`upsert`) or removed (`delete`)."""

    id: str
    op: str
    doc_ids: list[str]


def change_key(change_id: str) -> tuple[int, int]:
    """Stream ids ("ms-seq") in the order Redis gave them."""
    ms, _, seq = change_id.partition("-")
    return int(ms), int(seq or 0)


@dataclass(frozen=True)
class DocumentRecord:
    """A document as stored: text, metadata as JSON text, the backbone's raw vector bytes (one vector per passage,
    end to end) and its passages' character spans as JSON ("" for one passage: the whole text)."""

    id: str
    text: str
    metadata_json: str
    vector: bytes
    passages: str = ""


# Trim a change log and move its marker, only ever forward: two replicas snapshotting at different positions
# must not let the marker fall back behind entries that are gone (a reader would then miss them unawares).
_TRIM_FORWARD = """
local function before(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  return am < bm or (am == bm and as < bs)
end
local marker = redis.call('GET', KEYS[2])
if marker and not before(marker, ARGV[1]) then return 0 end
redis.call('XTRIM', KEYS[1], 'MINID', ARGV[1])
redis.call('SET', KEYS[2], ARGV[1])
return 1
"""


def store_call(fn):
    """Turn any Redis failure into StoreUnavailable (a 503), raised where it happens."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (redis.RedisError, OSError) as exc:  # the details (Redis's address) go to the log, not to clients
            log.warning("redis call %s failed: %s", fn.__name__, exc)
            raise StoreUnavailable(f"redis unavailable ({type(exc).__name__}); the server log has the details") from exc

    return wrapper


class RedisStore:
    """Key layout under `prefix`: artifacts by backbone fingerprint, documents by vector space."""

    def __init__(self, client: redis.Redis, prefix: str = "ce"):
        self.client = client
        self.prefix = prefix
        self._trim_forward = client.register_script(_TRIM_FORWARD)

    @classmethod
    def from_url(cls, url: str, prefix: str = "ce") -> RedisStore:
        client = redis.Redis.from_url(
            url, socket_timeout=5, socket_connect_timeout=2, health_check_interval=10, retry_on_timeout=True
        )
        return cls(client, prefix)

    def close(self) -> None:
        self.client.close()

    @store_call
    def store_id(self) -> str:
        """A random id created once per Redis dataset: a snapshot taken against another dataset is refused."""
        key = f"{self.prefix}:store-id"
        self.client.set(key, uuid.uuid4().hex, nx=True)
        return self.client.get(key).decode()

    def ping(self) -> bool:
        try:
            return bool(self.client.ping())
        except (redis.RedisError, OSError):
            return False

    # --- artifacts -------------------------------------------------------------------------------

    def _artifact_key(self, fingerprint: str, suffix: str) -> str:
        return f"{self.prefix}:artifact:{fingerprint}:{suffix}"

    @store_call
    def put_artifact(self, fingerprint: str, artifact_id: str, data: bytes, *, make_current: bool) -> None:
        """Write the blob and its version entry, then (same transaction) move the `current` pointer."""
        pipe = self.client.pipeline(transaction=True)
        pipe.set(self._artifact_key(fingerprint, f"v:{artifact_id}"), data)
        pipe.zadd(self._artifact_key(fingerprint, "versions"), {artifact_id: time.time()})
        if make_current:
            pipe.set(self._artifact_key(fingerprint, "current"), artifact_id)
        pipe.execute()

    @store_call
    def get_artifact(self, fingerprint: str, artifact_id: str) -> bytes | None:
        return self.client.get(self._artifact_key(fingerprint, f"v:{artifact_id}"))

    @store_call
    def current_artifact_id(self, fingerprint: str) -> str | None:
        value = self.client.get(self._artifact_key(fingerprint, "current"))
        return value.decode() if value is not None else None

    @store_call
    def artifact_versions(self, fingerprint: str) -> list[str]:
        """Artifact ids for this backbone, oldest first."""
        return [v.decode() for v in self.client.zrange(self._artifact_key(fingerprint, "versions"), 0, -1)]

    @store_call
    def delete_artifact(self, fingerprint: str, artifact_id: str) -> bool:
        """Drop a version (never the one `current` names); False if it is current or unknown."""
        if self.current_artifact_id(fingerprint) == artifact_id:
            return False
        pipe = self.client.pipeline(transaction=True)
        pipe.delete(self._artifact_key(fingerprint, f"v:{artifact_id}"))
        pipe.zrem(self._artifact_key(fingerprint, "versions"), artifact_id)
        return bool(pipe.execute()[0])

    # --- documents -------------------------------------------------------------------------------

    def _doc_key(self, space: str, doc_id: str) -> str:
        return f"{self.prefix}:doc:{space}:{doc_id}"

    def _ids_key(self, space: str) -> str:
        return f"{self.prefix}:docs:{space}"

    def _changes_key(self, space: str) -> str:
        return f"{self.prefix}:changes:{space}"

    def _log_change(self, pipe, space: str, op: str, doc_ids: Sequence[str]) -> None:
        pipe.xadd(self._changes_key(space), {"op": op, "ids": json.dumps(list(doc_ids))})

    @store_call
    def put_documents(self, space: str, docs: Sequence[DocumentRecord]) -> str:
        """Write all documents and their change-log entry in one MULTI/EXEC; returns the entry's id."""
        pipe = self.client.pipeline(transaction=True)
        for doc in docs:
            key = self._doc_key(space, doc.id)
            pipe.delete(key)
            fields = {"text": doc.text, "metadata": doc.metadata_json, "vector": doc.vector}
            pipe.hset(key, mapping={**fields, "passages": doc.passages} if doc.passages else fields)
            pipe.sadd(self._ids_key(space), doc.id)
        self._log_change(pipe, space, "upsert", [d.id for d in docs])
        return pipe.execute()[-1].decode()

    @store_call
    def delete_documents(self, space: str, doc_ids: Sequence[str]) -> tuple[int, str]:
        """Remove documents and log it, in one transaction; returns how many existed and the entry's id."""
        pipe = self.client.pipeline(transaction=True)
        for doc_id in doc_ids:
            pipe.delete(self._doc_key(space, doc_id))
            pipe.srem(self._ids_key(space), doc_id)
        self._log_change(pipe, space, "delete", doc_ids)
        results = pipe.execute()
        return sum(int(r) for r in results[:-1:2]), results[-1].decode()

    # --- change log --------------------------------------------------------------------------------

    @store_call
    def last_change_id(self, space: str) -> str:
        """Id of the newest change-log entry, "0-0" when there is none."""
        newest = self.client.xrevrange(self._changes_key(space), count=1)
        return newest[0][0].decode() if newest else "0-0"

    @store_call
    def changes_after(self, space: str, after: str, count: int = 1000) -> tuple[list[Change], str]:
        """Change-log entries newer than `after`, oldest first, and the trim marker read in the same
        transaction: if the marker is past `after`, entries this reader needed may be gone."""
        pipe = self.client.pipeline(transaction=True)
        pipe.xrange(self._changes_key(space), min=f"({after}", count=count)
        pipe.get(self._trimmed_key(space))
        entries, trimmed = pipe.execute()
        changes = [
            Change(entry_id.decode(), fields[b"op"].decode(), json.loads(fields[b"ids"]))
            for entry_id, fields in entries
        ]
        return changes, trimmed.decode() if trimmed is not None else "0-0"

    def _trimmed_key(self, space: str) -> str:
        return f"{self._changes_key(space)}:trimmed"

    @store_call
    def trim_changes(self, space: str, upto: str) -> bool:
        """Drop entries older than `upto` and move the marker there, unless it is already at or past it."""
        return bool(self._trim_forward(keys=[self._changes_key(space), self._trimmed_key(space)], args=[upto]))

    @store_call
    def changes_trimmed_through(self, space: str) -> str:
        value = self.client.get(self._trimmed_key(space))
        return value.decode() if value is not None else "0-0"

    def _position_key(self, space: str, replica: str) -> str:
        return f"{self._changes_key(space)}:at:{replica}"

    @store_call
    def report_position(self, space: str, replica: str, applied: str, ttl: float) -> None:
        """A replica's applied change-log entry, kept `ttl` seconds: while it lives, no trim passes it."""
        self.client.set(self._position_key(space, replica), applied, px=max(1, int(ttl * 1000)))

    def _position_keys(self, space: str) -> list[bytes]:
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", self._position_key(space, "")) + "*"
        return list(self.client.scan_iter(match=pattern, count=100))

    @store_call
    def live_positions(self, space: str) -> list[str]:
        """The positions replicas reported and that have not expired."""
        keys = self._position_keys(space)
        return [v.decode() for v in self.client.mget(keys) if v is not None] if keys else []

    @store_call
    def drop_space(self, space: str, batch: int = 500) -> int:
        """Delete a space's documents, raw vectors, id set, change log, trim marker and replica positions."""
        dropped = 0
        while ids := self.client.spop(self._ids_key(space), batch):
            self.client.delete(*(self._doc_key(space, doc_id.decode()) for doc_id in ids))
            dropped += len(ids)
        self.client.delete(self._changes_key(space), self._trimmed_key(space), *self._position_keys(space))
        return dropped

    @store_call
    def forget_position(self, space: str, replica: str) -> None:
        self.client.delete(self._position_key(space, replica))

    @store_call
    def get_documents(self, space: str, doc_ids: Sequence[str]) -> list[DocumentRecord | None]:
        """Documents in the order asked for; None where an id is unknown."""
        pipe = self.client.pipeline(transaction=False)
        for doc_id in doc_ids:
            pipe.hmget(self._doc_key(space, doc_id), "text", "metadata", "vector", "passages")
        out: list[DocumentRecord | None] = []
        for doc_id, (text, meta, vec, spans) in zip(doc_ids, pipe.execute(), strict=True):
            if text is None:
                out.append(None)
                continue
            out.append(DocumentRecord(doc_id, text.decode(), meta.decode(), vec, spans.decode() if spans else ""))
        return out

    @store_call
    def count_documents(self, space: str) -> int:
        return int(self.client.scard(self._ids_key(space)))

    def iter_documents(self, space: str, batch: int = 1000) -> Iterator[list[DocumentRecord]]:
        """Every stored document, in batches (SSCAN, so a large corpus never sits in one reply)."""
        cursor = 0
        while True:
            cursor, ids = self._scan_ids(space, cursor, batch)
            if ids:
                docs = self.get_documents(space, [i.decode() for i in ids])
                yield [d for d in docs if d is not None]
            if cursor == 0:
                return

    @store_call
    def _scan_ids(self, space: str, cursor: int, batch: int) -> tuple[int, list[bytes]]:
        return self.client.sscan(self._ids_key(space), cursor, count=batch)
