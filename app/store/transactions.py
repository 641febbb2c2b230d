"""A write acknowledged only once it is kept as promised: one MULTI/EXEC on the node that holds its slot, then WAIT on
the same connection until `replicas` replicas have it (Redis Cluster replicates asynchronously: a primary killed
before its replica has a write loses it)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import redis
from redis.client import Pipeline

from app.store.calls import Client

RETRY_SECONDS = 15.0  # how long a write keeps trying while a cluster fails over (node timeout 1 s: about 3 s here)
WAIT_MS = 2000  # how long a write waits for its replicas before it is refused
MOVING = ("MOVED", "ASK", "CLUSTERDOWN", "TRYAGAIN", "EXECABORT", "READONLY")  # a slot changing hands


class TooFewReplicas(redis.RedisError):
    """The write is on its primary but fewer replicas than asked have it: not acknowledged (a retry is safe)."""


class Transactions:
    """Runs queued commands as one transaction in the slot of their key, waiting for `replicas` replicas after."""

    def __init__(self, client: Client, replicas: int = 0):
        self.client = client
        self.replicas = replicas

    def run(self, key: str, queue: Callable[[Pipeline], None]) -> list[Any]:
        """`queue`'s commands' replies (unparsed, as EXEC gives them); retried while the slot changes hands."""
        deadline = time.monotonic() + RETRY_SECONDS
        while True:
            try:
                return self._once(key, queue)
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError) as exc:
                cluster = self.client if isinstance(self.client, redis.RedisCluster) else None
                moving = isinstance(exc, redis.ConnectionError | redis.TimeoutError) or str(exc).startswith(MOVING)
                if cluster is None or not moving or time.monotonic() > deadline:
                    raise
                time.sleep(0.25)
                cluster.nodes_manager.initialize()  # learn who serves the slot now

    def _once(self, key: str, queue: Callable[[Pipeline], None]) -> list[Any]:
        node = (
            self.client.get_node_from_key(key).redis_connection
            if isinstance(self.client, redis.RedisCluster)
            else self.client
        )
        pipe = Pipeline(node.connection_pool, {}, transaction=False, shard_hint=None)  # one connection, raw replies
        pipe.execute_command("MULTI")
        queue(pipe)
        pipe.execute_command("EXEC")
        if self.replicas:
            pipe.execute_command("WAIT", self.replicas, WAIT_MS)
        replies = pipe.execute()
        done: list[Any] | None = replies[-2] if self.replicas else replies[-1]
        if done is None:
            raise redis.ResponseError("EXECABORT the transaction was discarded")
        if self.replicas and replies[-1] < self.replicas:
            raise TooFewReplicas(f"the write reached {replies[-1]} of the {self.replicas} replicas it must reach")
        return done


def unacknowledged(nodes: dict[str, dict[str, Any]], replicas: int) -> str | None:
    """Why a write would not be acknowledged now, from CLUSTER NODES as redis-py parses it: a primary serving slots is
    down (or suspected), or has fewer live replicas than a write waits for; None when every write would be."""
    for address, node in sorted(nodes.items()):
        if "master" not in node["flags"] or not node["slots"]:
            continue
        if "fail" in node["flags"] or not node["connected"] and "myself" not in node["flags"]:
            return f"primary {address} does not answer: its slots take no writes until a replica takes over"
        live = [
            n
            for n in nodes.values()
            if "slave" in n["flags"] and n["master_id"] == node["node_id"] and "fail" not in n["flags"]
        ]
        if len(live) < replicas:
            return f"primary {address} has {len(live)} of the {replicas} replicas a write waits for"
    return None
