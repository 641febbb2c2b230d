"""Model-based test of the integrity invariant on real server processes and their embedded Redis: random sequences
of adds, replacements, deletes, bursts of concurrent writes landing while the follower compacts, pauses (compactions
and snapshots happen then), a new correction published (every server rebuilds), a second replica started and stopped,
kill -9 and restart, checked after every step against a dict of what was acknowledged. A drift the server found and
repaired by itself counts as a violation too: the invariant must hold, not be restored.

`make model-check` runs it long (CE_MODEL_STEPS steps over CE_MODEL_SEEDS seeds) and prints the figures."""

from __future__ import annotations

import os
import signal
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from app.backbones import build_backbone
from app.benchmarks.http import free_port
from app.core.config import Settings
from app.correction.publication import publish
from app.offline.fit import fit_artifact
from app.store.embedded import EmbeddedRedis
from app.store.redis_store import RedisStore
from tests.conftest import server_env, server_log, start_server, stop_server

IDS = [f"doc{i}" for i in range(12)]
STEPS = int(os.environ.get("CE_MODEL_STEPS", "510"))  # over all seeds
SEEDS = [int(s) for s in os.environ.get("CE_MODEL_SEEDS", "1,2,3").split(",")]
STEPS_PER_EXAMPLE = 50
ACTIONS = (
    ["add_or_replace"] * 8
    + ["delete"] * 5
    + ["pause"] * 3
    + ["burst"] * 2
    + ["toggle_replica", "kill_9_and_restart", "new_correction"]
)
FIGURES = {"steps": 0, "kills": 0, "replicas": 0, "pauses": 0, "bursts": 0, "corrections": 0, "checks": 0}
DRIFTED = "index drifted from the store"  # what the follower logs before it repairs a drift


class Server:
    """One `python -m app serve` on a data folder, its Redis the embedded one (or another's, for a replica)."""

    def __init__(self, root, name: str, redis_url: str | None = None):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        extra = {
            "CE_BACKBONE": "hashing",
            "CE_FOLLOW_INTERVAL": "0.05",
            "CE_SNAPSHOT_INTERVAL": "0.2",  # and a full check every 5 of them (1 s)
            "CE_MAX_K": "100",
        }
        if redis_url:
            extra["CE_REDIS_URL"] = redis_url
        (root / name).mkdir(parents=True, exist_ok=True)
        self.env = server_env(root / name, self.port, **extra)
        self.proc = start_server(self.env, self.base)
        self.client = httpx.Client(base_url=self.base, timeout=30)

    def kill(self) -> None:
        self.check_log()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def restart(self) -> None:
        self.proc = start_server(self.env, self.base)

    def stop(self) -> None:
        self.client.close()
        stop_server(self.proc)
        self.check_log()

    def check_log(self) -> None:
        log = server_log(self.proc)
        assert "unhandled error" not in log and DRIFTED not in log, log[-3000:]


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
        self.corrections = 0

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

    def add_or_replace(self, data, ids=None):
        ids = ids or data.draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=4, unique=True))
        docs = [{"id": d, "text": f"{d} carries the word w{uuid.uuid4().hex[:10]} and some common words"} for d in ids]
        r = self.writer(data).client.post("/documents", json={"documents": docs})
        assert r.status_code == 201, r.text
        self.model.update({d["id"]: d["text"] for d in docs})

    def delete(self, data, doc_id=None):
        doc_id = doc_id or data.draw(st.sampled_from(IDS))
        r = self.writer(data).client.delete(f"/documents/{doc_id}")
        assert r.status_code == (204 if doc_id in self.model else 404), r.text
        self.model.pop(doc_id, None)

    def burst(self, data):
        """After a quiet spell (a compaction is then due), writes on distinct ids sent at once from threads, staggered
        over a few follower steps: some land while the lexical index is rebuilt. Distinct ids keep the outcome
        independent of their order."""
        self.add_or_replace(data)  # a replaced or fresh version: the lexical index has something to compact
        time.sleep(0.2)
        ids = data.draw(st.lists(st.sampled_from(IDS), min_size=2, max_size=6, unique=True))
        plan = [(d, data.draw(st.sampled_from(["add", "delete"])), data.draw(st.floats(0, 0.3))) for d in ids]
        writers = [self.writer(data) for _ in plan]

        def send(op):
            (doc_id, kind, delay), server = op
            time.sleep(delay)
            if kind == "add":
                text = f"{doc_id} carries the word w{uuid.uuid4().hex[:10]} and some common words"
                docs = [{"id": doc_id, "text": text}]
                return doc_id, text, 201, server.client.post("/documents", json={"documents": docs})
            return doc_id, None, 204 if doc_id in self.model else 404, server.client.delete(f"/documents/{doc_id}")

        with ThreadPoolExecutor(len(plan)) as pool:
            answers = list(pool.map(send, zip(plan, writers, strict=True)))
        for doc_id, text, expected, r in answers:
            assert r.status_code == expected, r.text
            if text is None:
                self.model.pop(doc_id, None)
            else:
                self.model[doc_id] = text
        FIGURES["bursts"] += 1

    def new_correction(self, _data):
        """A correction fitted elsewhere and published as current: every server rebuilds its index with it."""
        self.corrections += 1
        backbone = build_backbone(Settings(backbone="hashing"))
        corpus = [f"sentence {i} of correction {self.corrections} about common words" for i in range(40)]
        artifact = fit_artifact(backbone, corpus, "whitening", {"alpha": 0.5, "dim": 8}, progress=False)
        store = RedisStore.from_url(self.redis_url, prefix=Settings().key_prefix)
        try:
            publish(store, artifact)
        finally:
            store.close()
        FIGURES["corrections"] += 1

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
    before = dict(FIGURES)
    target = before["steps"] + STEPS // len(SEEDS)
    rounds = 0
    while FIGURES["steps"] < target:  # Hypothesis may end a run of steps early: go on, from a seed of its own
        factory = seed(run_seed * 1000 + rounds)(lambda: Integrity())
        examples = max(1, (target - FIGURES["steps"]) // STEPS_PER_EXAMPLE)
        run_state_machine_as_test(
            factory,
            settings=settings(
                max_examples=examples,
                stateful_step_count=STEPS_PER_EXAMPLE,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
                derandomize=False,
                phases=[Phase.explicit, Phase.generate],  # shrinking would replay real processes for many minutes
            ),
        )
        rounds += 1
    done = {k: FIGURES[k] - before[k] for k in FIGURES}
    print(f"seed {run_seed}: {done}")
