"""The one-time move of an untagged dataset (layout 1) to tagged keys, done by the first process to connect."""

from __future__ import annotations

import logging
import time
import uuid

import redis

from app.store.calls import Client, store_call
from app.store.keys import LAYOUT, tag

log = logging.getLogger(__name__)
COLLECTION_KINDS = ("doc", "docs", "changes", "ingestion", "judgments", "ranking")  # keys owned by a collection key
OWNER_KINDS = ("docs", "ingestion", "judgments", "ranking")  # whose whole rest is the owner, in layout 1
BATCH = 1000  # keys scanned and renamed a round trip
MIGRATION_SECONDS = 3600  # how long a migrating process holds the lock before another may take over


def layout_key(prefix: str) -> str:
    return f"{prefix}:layout"


def owners_in(client: Client, prefix: str) -> set[str]:
    """Every collection key a layout-1 dataset holds, read off the keys whose whole rest is one and its change logs
    (a stream stays when its last entry is trimmed): a collection key may hold colons, a document key cannot say."""
    owners = set()
    for kind in (*OWNER_KINDS, "changes"):
        start = f"{prefix}:{kind}:"
        for key in client.scan_iter(match=f"{start}*", count=BATCH):
            rest = key.decode()[len(start) :]
            if not rest.startswith("{") and (kind != "changes" or client.type(key) == b"stream"):
                owners.add(rest)
    return owners


def renamed(prefix: str, key: str, owners: set[str]) -> str | None:
    """`key`'s name in layout 2, or None when it needs none (untouched kinds, already tagged, no owner known)."""
    kind, _, rest = key[len(prefix) + 1 :].partition(":")
    if rest.startswith("{"):
        return None
    if kind == "artifact":
        owner = rest.partition(":")[0]
    elif kind in COLLECTION_KINDS:
        match = max((o for o in owners if rest == o or rest.startswith(o + ":")), key=len, default=None)
        if match is None:
            log.warning("key %s names no collection this dataset holds: left as it is", key)
            return None
        owner = match
    else:
        return None
    return f"{prefix}:{kind}:{tag(owner)}{rest[len(owner) :]}"


def migrate(client: Client, prefix: str) -> int:
    """Rename every layout-1 key under `prefix` to its tagged name, a batch at a time while scanning (SCAN returns
    every key that stays all along, and a renamed one needs nothing more); one Redis only: RENAME needs both names in
    one slot."""
    owners, moved = owners_in(client, prefix), 0
    batch: list[tuple[str, str]] = []

    def flush() -> int:
        if isinstance(client, redis.RedisCluster):
            raise RuntimeError(
                f"keys under {prefix!r} are in layout 1 on a cluster, where they cannot be renamed: start a server on "
                "the single Redis they came from (it moves them), then copy them (python -m app copy-store)"
            )
        pipe = client.pipeline(transaction=False)
        for old, new in batch:
            pipe.renamenx(old, new)
        done = sum(bool(r is True or r == 1) for r in pipe.execute(raise_on_error=False))
        batch.clear()
        return done

    for key in client.scan_iter(match=f"{prefix}:*", count=BATCH):
        if new := renamed(prefix, key.decode(), owners):
            batch.append((key.decode(), new))
        if len(batch) >= BATCH:
            moved += flush()
            if moved % (100 * BATCH) < BATCH:
                log.info("store layout %s: %d keys renamed so far", LAYOUT, moved)
    moved += flush() if batch else 0
    if moved:
        log.info("store layout %s: %d keys renamed to their tagged names", LAYOUT, moved)
    return moved


@store_call
def ensure_layout(client: Client, prefix: str, *, wait: float = MIGRATION_SECONDS) -> int:
    """Bring the dataset to the current layout once (the first process to connect moves it, the others wait for
    it); returns how many keys this process renamed."""
    key = layout_key(prefix)
    deadline = time.monotonic() + wait
    while client.get(key) != LAYOUT.encode():
        lock, me = f"{key}:migrating", uuid.uuid4().hex
        if client.set(lock, me, nx=True, px=MIGRATION_SECONDS * 1000):
            try:
                moved = migrate(client, prefix)
                client.set(key, LAYOUT)
                return moved
            finally:
                client.delete(lock)
        if time.monotonic() > deadline:
            raise TimeoutError(f"another process has held {lock} for over {wait:.0f} s")
        time.sleep(0.2)
    return 0
