"""One Redis connection and the stores on it, one per concern; each only moves bytes."""

from __future__ import annotations

import uuid
from typing import cast

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.cluster import LoadBalancingStrategy
from redis.retry import Retry

from app.store.artifacts import ArtifactStore
from app.store.calls import Client, store_call, text
from app.store.change_log import ChangeLog
from app.store.collection_store import CollectionStore
from app.store.documents import DocumentStore
from app.store.ingestion import IngestionCheckpoints
from app.store.judgments import JudgmentStore
from app.store.migration import ensure_layout
from app.store.replicas import ReplicaPositions
from app.store.transactions import Transactions, unacknowledged

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
# A cluster call to a primary that died gives up within about 0.3 s: a read then asks the replica (calls.read) and a
# write retries until the failover ends (transactions.RETRY_SECONDS). redis-py's own default (10 tries, backing off
# to 1 s) held a read up to 2.4 s on the dead primary, longer than the failover it was meant to ride out.
CLUSTER_RETRIES, CLUSTER_BACKOFF_CAP = 3, 0.1


def connect(url: str, *, replicas: bool = False) -> Client:
    """A client of one Redis, or of a Redis Cluster when the scheme says so (the same commands, routed by slot);
    with `replicas`, one whose reads go to the slots' replicas."""
    scheme, _, rest = url.partition("://")
    if scheme in CLUSTER_SCHEMES:
        balance = {"load_balancing_strategy": LoadBalancingStrategy.ROUND_ROBIN_REPLICAS} if replicas else {}
        return redis.RedisCluster.from_url(
            f"{CLUSTER_SCHEMES[scheme]}://{rest}",
            socket_timeout=5,
            socket_connect_timeout=2,
            retry=Retry(ExponentialWithJitterBackoff(base=0.01, cap=CLUSTER_BACKOFF_CAP), CLUSTER_RETRIES),
            **balance,
        )
    return redis.Redis.from_url(
        url, socket_timeout=5, socket_connect_timeout=2, health_check_interval=10, retry_on_timeout=True
    )


class RedisStore:
    """Key layout under `prefix`: artifacts by backbone fingerprint; documents, change log, replica positions,
    ingestion checkpoints, judgments and the ranking tuned on them by collection key; collections' settings by name."""

    def __init__(
        self,
        client: Client,
        prefix: str = "ce",
        *,
        wait_replicas: int | None = None,
        replica: Client | None = None,
    ):
        self.client = client
        self.replica = replica
        self.prefix = prefix
        clustered = isinstance(client, redis.RedisCluster)
        self.wait_replicas = (1 if clustered else 0) if wait_replicas is None else wait_replicas
        self.artifacts = ArtifactStore(client, prefix)
        self.changes = ChangeLog(client, prefix)
        self.documents = DocumentStore(
            client, prefix, self.changes, Transactions(client, self.wait_replicas), replica=replica
        )
        self.replicas = ReplicaPositions(client, prefix)
        self.collections = CollectionStore(client, prefix)
        self.ingestion = IngestionCheckpoints(client, prefix)
        self.judgments = JudgmentStore(client, prefix, replica)

    @classmethod
    def from_url(cls, url: str, prefix: str = "ce", *, wait_replicas: int | None = None) -> RedisStore:
        """The store at `url` (`redis+cluster://host:port`: a Redis Cluster, any node of it), its dataset brought to
        the current key layout first; a document write is acknowledged once `wait_replicas` replicas have it
        (None: one on a cluster, none on one Redis, whose append-only file is the promise)."""
        client = connect(url)
        ensure_layout(client, prefix)
        replica = connect(url, replicas=True) if isinstance(client, redis.RedisCluster) else None
        return cls(client, prefix, wait_replicas=wait_replicas, replica=replica)

    def close(self) -> None:
        self.client.close()
        if self.replica is not None:
            self.replica.close()

    @store_call
    def store_id(self) -> str:
        """A random id created once per Redis dataset: a snapshot taken against another dataset is refused."""
        key = f"{self.prefix}:store-id"
        self.client.set(key, uuid.uuid4().hex, nx=True)
        return text(self.client.get(key) or b"")

    def ping(self) -> bool:
        try:
            return bool(self.client.ping())
        except (redis.RedisError, OSError):
            return False

    def writes_refused(self) -> str | None:
        """Why a document write would be refused now (a 503), or None: what /ready reports beside its checks."""
        if not isinstance(self.client, redis.RedisCluster):
            return None if self.ping() else "redis does not answer"
        try:
            nodes = self.documents.read(lambda client: cast(redis.RedisCluster, client).cluster_nodes())
        except (redis.RedisError, OSError) as exc:
            return f"the cluster does not answer ({type(exc).__name__})"
        return unacknowledged(nodes, self.wait_replicas)

    def drop_collection(self, collection_key: str) -> int:
        """Delete a collection's documents, raw vectors, id set, change log, trim marker, replica positions,
        ingestion checkpoints, judgments and tuned ranking."""
        dropped = self.documents.drop(collection_key)
        self.changes.drop(collection_key)
        self.replicas.drop(collection_key)
        self.ingestion.drop(collection_key)
        self.judgments.drop(collection_key)
        return dropped
