"""A collection's change log: a Redis stream of the documents each write touched, read by every replica."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.client import Pipeline

from app.store.calls import Client, KeyedStore, store_call, text
from app.store.keys import parts_of


@dataclass(frozen=True)
class Change:
    """One entry of a collection's change log: documents written (`upsert`) or removed (`delete`)."""

    id: str
    op: str
    doc_ids: list[str]


def change_key(change_id: str) -> tuple[int, int]:
    """Stream ids ("ms-seq") in the order Redis gave them."""
    ms, _, seq = change_id.partition("-")
    return int(ms), int(seq or 0)


def parsed(fields: dict[bytes, Any] | list[Any]) -> tuple[str, list[str]]:
    """An entry's operation and ids; a cluster's transaction hands the fields back as a flat list, unparsed."""
    if isinstance(fields, list):
        fields = dict(zip(fields[::2], fields[1::2], strict=True))
    return fields[b"op"].decode(), json.loads(fields[b"ids"])


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


class ChangeLog(KeyedStore):
    """Appends entries inside a writer's transaction; reads them with the trim marker, which only moves forward."""

    def __init__(self, client: Client, prefix: str):
        super().__init__(client, prefix)
        self._trim_forward = client.register_script(_TRIM_FORWARD)

    def key(self, collection_key: str) -> str:
        return self.owned_key("changes", collection_key)

    def _trimmed_key(self, collection_key: str) -> str:
        return self.owned_key("changes", collection_key, "trimmed")

    def append(self, pipe: Pipeline, collection_key: str, op: str, doc_ids: Sequence[str]) -> None:
        """Queue an entry on the writer's transaction, so documents and their entry land together."""
        pipe.xadd(self.key(collection_key), {"op": op, "ids": json.dumps(list(doc_ids))})

    @store_call
    def last_id(self, collection_key: str) -> str:
        """Id of the newest change-log entry, "0-0" when there is none."""
        newest = self.client.xrevrange(self.key(collection_key), count=1)
        return text(newest[0][0] or "0-0") if newest else "0-0"

    @store_call
    def after(self, collection_key: str, after: str, count: int = 1000) -> tuple[list[Change], str]:
        """Change-log entries newer than `after`, oldest first, and the trim marker read in the same
        transaction: if the marker is past `after`, entries this reader needed may be gone."""
        pipe = self.client.pipeline(transaction=True)
        pipe.xrange(self.key(collection_key), min=f"({after}", count=count)
        pipe.get(self._trimmed_key(collection_key))
        entries, trimmed = pipe.execute()
        changes = [Change(entry_id.decode(), *parsed(fields)) for entry_id, fields in entries]
        return changes, trimmed.decode() if trimmed is not None else "0-0"

    @store_call
    def trim(self, collection_key: str, upto: str) -> bool:
        """Drop entries older than `upto` and move the marker there, unless it is already at or past it."""
        keys = [self.key(collection_key), self._trimmed_key(collection_key)]
        return bool(self._trim_forward(keys=keys, args=[upto]))

    @store_call
    def trimmed_through(self, collection_key: str) -> str:
        value = self.client.get(self._trimmed_key(collection_key))
        return text(value) if value is not None else "0-0"

    @store_call
    def drop(self, collection_key: str) -> None:
        for part in {collection_key, *parts_of(collection_key)}:
            self.client.delete(self.key(part), self._trimmed_key(part))
