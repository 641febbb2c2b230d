"""Model-based test of the integrity invariant on real server processes and their embedded Redis: random sequences
of adds, replacements, deletes, pauses (compactions and snapshots happen then), a second replica started and
stopped, kill -9 and restart, checked after every step against a dict of what was acknowledged.

`make model-check` runs it long (CE_MODEL_STEPS steps over CE_MODEL_SEEDS seeds) and prints the figures."""

from __future__ import annotations

import os
import signal
import time
import uuid

import httpx
import pytest
from hypothesis import HealthCheck, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from app.benchmarks.http import free_port
from app.store.embedded import EmbeddedRedis
from tests.conftest import server_env, server_log, start_server, stop_server

IDS = [f"doc{i}" for i in range(12)]
STEPS = int(os.environ.get("CE_MODEL_STEPS", "600"))  # over all seeds
SEEDS = [int(s) for s in os.environ.get("CE_MODEL_SEEDS", "1,2,3").split(",")]
STEPS_PER_EXAMPLE = 50
ACTIONS = ["add_or_replace"] * 8 + ["delete"] * 5 + ["pause"] * 3 + ["toggle_replica", "kill_9_and_restart"]
FIGURES = {"steps": 0, "kills": 0, "replicas": 0, "pauses": 0, "checks": 0}


class Server:
    """One `python -m app serve` on a data folder, its Redis the embedded one (or another's, for a replica)."""

    def __init__(self, root, name: str, redis_url: str | None = None):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        extra = {"CE_BACKBONE": "hashing", "CE_FOLLOW_INTERVAL": "0.05", "CE_SNAPSHOT_INTERVAL": "0.5",
                 "CE_VERIFY_INTERVAL": "1", "CE_MAX_K": "100"}  # fmt: skip
        if redis_url:
            extra["CE_REDIS_URL"] = redis_url
        (root / name).mkdir(parents=True, exist_ok=True)
        self.env = server_env(root / name, self.port, **extra)
        self.proc = start_server(self.env, self.base)
        self.client = httpx.Client(base_url=self.base, timeout=30)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def restart(self) -> None:
        self.proc = start_server(self.env, self.base)

    def stop(self) -> None:
        self.client.close()
        stop_server(self.proc)
        assert "unhandled error" not in server_log(self.proc)


class Integrity(RuleBasedStateMachine):
    """What was acknowledged (the model) against what every server's store, dense and lexical index hold."""

    root = None  # set per test

    def __init__(self):
        super().__init__()
        self.home = self.root / uuid.uuid4().hex[:8]
        self.primary = Server(self.home, "primary")
        self.redis_url = EmbeddedRedis(self.home / "primary" / "data" / "redis").url
        self.replica: Server | None = None
        self.model: dict[str, str] = {}

    def servers(self) -> list[Server]:
        return [self.primary] + ([self.replica] if self.replica else [])

    def teardown(self):
        for server in reversed(self.servers()):
            server.stop()

    @rule(action=st.sampled_from(ACTIONS), data=st.data())
    def step(self, action, data):
        """One operation, drawn with the weights of ACTIONS (kills and replicas are dear: a process each)."""
        getattr(self, action)(data)
        FIGURES["steps"] += 1

    def add_or_replace(self, data):
        ids = data.draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=4, unique=True))
        docs = [{"id": d, "text": f"{d} carries the word w{uuid.uuid4().hex[:10]} and some common words"} for d in ids]
        r = self.writer(data).client.post("/documents", json={"documents": docs})
        assert r.status_code == 201, r.text
        self.model.update({d["id"]: d["text"] for d in docs})

    def delete(self, data):
        doc_id = data.draw(st.sampled_from(IDS))
        r = self.writer(data).client.delete(f"/documents/{doc_id}")
        assert r.status_code == (204 if doc_id in self.model else 404), r.text
        self.model.pop(doc_id, None)

    def writer(self, data) -> Server:
        return self.replica if self.replica and data.draw(st.booleans()) else self.primary

    def pause(self, _data):
        """Writes pause: the follower compacts a lexical index with dead versions, and snapshots."""
        time.sleep(0.4)
        FIGURES["pauses"] += 1

    def kill_9_and_restart(self, _data):
        self.primary.kill()
        self.primary.restart()
        FIGURES["kills"] += 1

    def toggle_replica(self, _data):
        """Start a second server on the primary's Redis (its own data folder; it follows the change log), or stop it."""
        if self.replica is None:
            self.replica = Server(self.home, f"replica-{uuid.uuid4().hex[:6]}", redis_url=self.redis_url)
            FIGURES["replicas"] += 1
        else:
            self.replica.stop()
            self.replica = None

    @invariant()
    def every_acknowledged_write_is_in_every_index(self):
        FIGURES["checks"] += 1
        for server in self.servers():
            check = server.client.post("/collections/default/verify").json()  # catches up, then every id
            assert check["ok"] and check["stored"] == len(self.model), check
            for mode in ("dense", "hybrid", "lexical"):
                hits = server.client.get("/search", params={"q": "common words", "k": 100, "mode": mode}).json()
                assert {h["id"] for h in hits["results"]} == set(self.model), (mode, hits)
        for doc_id, text in self.model.items():
            word = text.split()[4]
            hits = self.primary.client.get("/search", params={"q": word, "mode": "lexical", "k": 3}).json()["results"]
            assert [h["id"] for h in hits] == [doc_id], (doc_id, word, hits)


@pytest.mark.parametrize("run_seed", SEEDS)
def test_the_invariant_holds_over_random_interleavings(tmp_path, run_seed):
    Integrity.root = tmp_path
    examples = max(1, STEPS // (len(SEEDS) * STEPS_PER_EXAMPLE))
    factory = seed(run_seed)(lambda: Integrity())
    before = dict(FIGURES)
    run_state_machine_as_test(factory, settings=settings(
        max_examples=examples, stateful_step_count=STEPS_PER_EXAMPLE, deadline=None, database=None,
        suppress_health_check=list(HealthCheck), derandomize=False,
    ))  # fmt: skip
    done = {k: FIGURES[k] - before[k] for k in FIGURES}
    print(f"seed {run_seed}: {done}")
