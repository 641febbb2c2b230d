"""What every store shares: its connection and key prefix, and Redis failures turned into one error (a 503)."""

from __future__ import annotations

import functools
import logging

import redis

from app.core.errors import StoreUnavailable
from app.store.keys import owned

log = logging.getLogger(__name__)


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


class KeyedStore:
    """A store of one concern on the shared connection, its keys under the service's prefix."""

    def __init__(self, client: redis.Redis, prefix: str):
        self.client = client
        self.prefix = prefix

    def owned_key(self, kind: str, owner: str, *rest: str) -> str:
        """A key in `owner`'s hash slot (store/keys.py): what one transaction writes together shares it."""
        return owned(self.prefix, kind, owner, *rest)
