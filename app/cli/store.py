"""`copy-store`: one Redis's dataset onto another Redis or a Redis Cluster, the way a deployment moves to a cluster."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from tqdm import tqdm

from app.cli.options import EXIT_BAD_INPUT, fail, guarded


@guarded
def copy_store(
    source: Annotated[str, typer.Option(help="The Redis copied from (redis://, unix:// or redis+cluster://).")],
    target: Annotated[
        str | None, typer.Option(help="The Redis copied to; default CE_REDIS_URL (a cluster: redis+cluster://).")
    ] = None,
    force: Annotated[bool, typer.Option(help="Copy even when the target holds keys under the prefix already.")] = False,
) -> None:
    """Copy every key under CE_KEY_PREFIX from --source to the target, expiry kept. The source is first brought to the
    current key layout (as a server's start would). Stop the servers writing to the source first."""
    from app.core.config import get_settings
    from app.store.copy import copy_keys, keys_under
    from app.store.redis_store import RedisStore

    settings = get_settings()
    target = target or settings.redis_url
    if not target:
        raise fail("no target: pass --target or set CE_REDIS_URL", EXIT_BAD_INPUT)
    prefix = settings.key_prefix
    origin, destination = RedisStore.from_url(source, prefix), RedisStore.from_url(target, prefix)
    already = keys_under(destination.client, prefix) - 1  # the layout key it has just written
    if already > 0 and not force:
        raise fail(
            f"the target holds {already} keys under {prefix!r} already; --force copies over them", EXIT_BAD_INPUT
        )
    total = keys_under(origin.client, prefix)
    with tqdm(total=total, desc="copy", unit=" keys") as bar:

        def advance(keys: int) -> None:
            bar.update(keys)

        copied = copy_keys(origin.client, destination.client, prefix, advance)
    documents = sum(1 for _ in destination.client.scan_iter(match=f"{prefix}:doc:*", count=1000))
    typer.echo(json.dumps({"copied": copied, "source_keys": total, "documents": documents}))
    origin.close()
    destination.close()
