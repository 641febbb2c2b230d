"""What every store shares: its connection and key prefix, and Redis failures turned into one error (a 503)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import ParamSpec, TypeVar, overload

import redis

from app.core.errors import StoreUnavailable
from app.store.keys import owned

log = logging.getLogger(__name__)
T = TypeVar("T")
P = ParamSpec("P")
# What the stores talk to: one Redis, or a Redis Cluster answering the same commands routed by slot.
Client = redis.Redis | redis.RedisCluster


def text(value: bytes | str) -> str:
    """A reply as text: Redis answers bytes here (responses are not decoded), which redis-py types as bytes | str."""
    return value.decode() if isinstance(value, bytes) else value


@overload
def blob(value: bytes | str) -> bytes: ...
@overload
def blob(value: bytes | str | None) -> bytes | None: ...
def blob(value: bytes | str | None) -> bytes | None:
    """A reply as bytes, or None where Redis had nothing (as `text`: redis-py types a reply bytes | str)."""
    return value.encode() if isinstance(value, str) else value


def store_call(fn: Callable[P, T]) -> Callable[P, T]:
    """Turn any Redis failure into StoreUnavailable (a 503), raised where it happens."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return fn(*args, **kwargs)
        except (redis.RedisError, OSError) as exc:  # the details (Redis's address) go to the log, not to clients
            log.warning("redis call %s failed: %s", fn.__name__, exc)
            raise StoreUnavailable(f"redis unavailable ({type(exc).__name__}); the server log has the details") from exc

    return wrapper


# What a read meets while its slot's primary is down and before its replica has taken over.
FAILOVER = (
    redis.ConnectionError,
    redis.TimeoutError,
    redis.exceptions.ClusterDownError,
    redis.exceptions.TryAgainError,
)


class KeyedStore:
    """A store of one concern on the shared connection, its keys under the service's prefix; on a cluster, reads
    that searches and document reads need are asked of a replica when the primary does not answer."""

    def __init__(self, client: Client, prefix: str, replica: Client | None = None):
        self.client = client
        self.prefix = prefix
        self.replica = replica  # the same cluster, reading from replicas (store.redis_store.connect); None: one Redis

    def read(self, fn: Callable[[Client], T]) -> T:
        """`fn` on the primaries, or on the replicas while a primary fails over: every acknowledged write is on a
        replica (a write waits for one on a cluster), so what it reads there was acknowledged."""
        try:
            return fn(self.client)
        except FAILOVER as exc:
            if self.replica is None:
                raise
            log.info("read %s from a replica: %s", getattr(fn, "__name__", "?"), exc)
            return fn(self.replica)

    def owned_key(self, kind: str, owner: str, *rest: str) -> str:
        """A key in `owner`'s hash slot (store/keys.py): what one transaction writes together shares it."""
        return owned(self.prefix, kind, owner, *rest)
