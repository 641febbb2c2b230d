"""A dataset copied key by key to another Redis or Redis Cluster (DUMP and RESTORE, expiry kept): how one Redis's
data moves onto a cluster."""

from __future__ import annotations

from collections.abc import Callable

from app.store.calls import Client

BATCH = 500  # keys a round trip


def keys_under(client: Client, prefix: str) -> int:
    """How many keys `client` holds under `prefix` (every primary of a cluster)."""
    return sum(1 for _ in client.scan_iter(match=f"{prefix}:*", count=1000))


def copy_keys(source: Client, target: Client, prefix: str, progress: Callable[[int], None]) -> int:
    """Copy every key under `prefix` from `source` to `target`, replacing what `target` holds under the same name;
    returns how many. Writers to `source` should be stopped first: a key written meanwhile may be missed."""
    copied = 0
    batch: list[bytes] = []

    def flush() -> None:
        nonlocal copied
        read = source.pipeline(transaction=False)
        for key in batch:
            read.dump(key)
            read.pttl(key)
        replies = read.execute()
        write = target.pipeline(transaction=False)
        for key, data, ttl in zip(batch, replies[::2], replies[1::2], strict=True):
            if data is not None:  # gone since the scan (an expired replica position)
                write.restore(key, max(int(ttl), 0), data, replace=True)
        copied += len(write.execute())
        progress(len(batch))
        batch.clear()

    for key in source.scan_iter(match=f"{prefix}:*", count=1000):
        batch.append(key)
        if len(batch) >= BATCH:
            flush()
    if batch:
        flush()
    return copied
