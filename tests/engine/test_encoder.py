"""The batching engine: each caller gets its own vectors, the queue is bounded, shutdown finishes work."""

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from app.backbones.hashing import HashingBackbone
from app.core.errors import NotReady, Overloaded, RequestTimeout
from app.engine.encoder import RELEASE_AFTER_TEXTS, UNDER_REQUEST, BatchingEngine


class SlowBackbone(HashingBackbone):
    """Records every round it is given and takes a while, so that requests pile up behind it."""

    def __init__(self, delay: float = 0.05):
        super().__init__(dim=16)
        self.delay = delay
        self.rounds: list[int] = []
        self.rounds_texts: list[list[str]] = []
        self.release = threading.Event()
        self.release.set()

    def encode(self, texts):
        self.release.wait()
        time.sleep(self.delay)
        self.rounds.append(len(texts))
        self.rounds_texts.append(list(texts))
        return super().encode(texts)


def test_concurrent_callers_get_their_own_vectors_in_order():
    backbone = SlowBackbone(delay=0.01)
    engine = BatchingEngine(backbone, round_texts=64)
    requests = [[f"client {c} text {i} " + "word " * (c * i % 7) for i in range(8)] for c in range(16)]
    try:
        with ThreadPoolExecutor(16) as pool:
            results = list(pool.map(engine.encode, requests))
    finally:
        engine.close()
    reference = HashingBackbone(dim=16)
    for texts, vectors in zip(requests, results, strict=True):
        np.testing.assert_allclose(vectors, reference.encode(texts), atol=1e-5)
    assert max(backbone.rounds) > 8  # requests were really grouped into shared rounds


def test_a_full_queue_answers_overloaded_with_retry_after():
    backbone = SlowBackbone()
    backbone.release.clear()  # the worker blocks on its first round
    engine = BatchingEngine(backbone, max_queue_texts=10, round_texts=1)
    try:
        first = engine.submit(["a"] * 6)
        time.sleep(0.05)
        second = engine.submit(["b"] * 4)  # 10 queued: at the limit, still accepted
        with pytest.raises(Overloaded) as err:
            engine.submit(["c"] * 5)  # 5 of the first's and 4 of the second's would be encoded before its last
        assert err.value.retry_after >= 1
        short = engine.submit(["d"])  # a short one's fair share waits behind one text of each: taken
        backbone.release.set()
        assert first.result(5).shape == (6, 16) and second.result(5).shape == (4, 16)
        assert short.result(5).shape == (1, 16)
        assert engine.encode(["c"] * 5).shape == (5, 16)  # room again once drained
    finally:
        backbone.release.set()
        engine.close()


def test_rounds_give_every_request_a_share_so_a_short_one_never_waits_for_a_long_one():
    backbone = SlowBackbone(delay=0.01)
    backbone.release.clear()
    engine = BatchingEngine(backbone, round_texts=64, round_tokens=40)
    try:
        long = engine.submit([f"passage {i} " + "word " * 30 for i in range(40)])  # ~40 tokens each: one a round
        time.sleep(0.05)
        short = engine.submit(["a short query"])
        backbone.release.set()
        short.result(5)
        assert not long.done()  # answered between the long request's rounds
        vectors = long.result(10)
        np.testing.assert_allclose(
            vectors, HashingBackbone(dim=16).encode([f"passage {i} " + "word " * 30 for i in range(40)]), atol=1e-5
        )
        assert ["a short query"] in [[t for t in r if t == "a short query"] for r in backbone.rounds_texts[:3]]
        assert max(backbone.rounds) <= 2
    finally:
        backbone.release.set()
        engine.close()


@pytest.fixture
def under_request():
    """As the HTTP layer marks the work of the request it serves: held to the engine's request timeout."""
    token = UNDER_REQUEST.set(True)
    yield
    UNDER_REQUEST.reset(token)


def test_work_that_serves_no_request_has_no_deadline_however_slow_the_encoder():
    """`eval-search`, `fit`, `index`, `import` and the benchmarks finish on a loaded machine: no 504 mid-way."""
    engine = BatchingEngine(SlowBackbone(delay=0.02), round_texts=4, request_timeout=0.05)
    try:
        assert engine.timeout() is None
        assert engine.encode([f"text {i}" for i in range(40)]).shape == (40, 16)  # 10 rounds: 0.2 s, past 0.05
        assert asyncio.run(engine.encode_async([f"text {i}" for i in range(40)])).shape == (40, 16)
        assert engine.stats()["texts_dropped"] == 0
    finally:
        engine.close()


def test_after_its_deadline_no_further_round_of_a_request_is_encoded(under_request):
    backbone = SlowBackbone(delay=0.02)
    engine = BatchingEngine(backbone, round_texts=4, request_timeout=0.3)
    texts = [f"text {i}" for i in range(400)]  # 100 rounds of 20 ms: far past its deadline
    try:
        with pytest.raises(RequestTimeout):
            engine.encode(texts)
        encoded = engine.stats()["texts_encoded"]
        time.sleep(0.2)
        stats = engine.stats()
        assert stats["texts_encoded"] <= encoded + 4  # at most the round under way when it timed out
        assert stats["texts_dropped"] + stats["texts_encoded"] == len(texts)
        assert stats["queued_texts"] == 0 and engine.encode(["after"]).shape == (1, 16)
    finally:
        engine.close()


def test_a_request_dropped_at_its_deadline_answers_timeout_not_cancelled(under_request):
    """The worker may drop a job before its caller's own wait runs out: the caller must still get a 504."""
    backbone = SlowBackbone(delay=0.0)
    backbone.release.clear()  # the worker holds the first job's round until released
    engine = BatchingEngine(backbone, round_texts=1, request_timeout=0.05)
    try:
        first = engine.submit(["first"])
        time.sleep(0.01)  # taken by the worker, which now waits on `release`
        late = engine.submit(["late"])
        time.sleep(0.1)  # past both deadlines
        backbone.release.set()
        first.result(5)  # its round was under way: finished
        with pytest.raises(RequestTimeout, match="not encoded within"):
            late.result(5)  # dropped at the next round, never encoded
        assert engine.stats()["texts_dropped"] == 1
    finally:
        engine.close()


def test_encode_async_past_its_deadline_answers_timeout(under_request):
    backbone = SlowBackbone(delay=0.02)
    engine = BatchingEngine(backbone, round_texts=2, request_timeout=0.1)
    try:
        with pytest.raises(RequestTimeout):
            asyncio.run(engine.encode_async([f"text {i}" for i in range(100)]))
    finally:
        engine.close()


def test_an_idle_encoder_hands_memory_back_after_much_work_only():
    released = []
    engine = BatchingEngine(HashingBackbone(dim=8), round_texts=64, release_memory=lambda: released.append(1))
    try:
        engine.encode([f"t{i}" for i in range(RELEASE_AFTER_TEXTS - 1)])
        engine.encode(["one more"])  # now past the threshold, and idle after it
        time.sleep(0.05)
        assert released == [1]
        engine.encode(["short"] * 10)
        time.sleep(0.05)
        assert released == [1]  # too little since
    finally:
        engine.close()


def test_a_single_request_larger_than_the_queue_is_still_served_when_alone():
    engine = BatchingEngine(HashingBackbone(dim=8), max_queue_texts=4)
    try:
        assert engine.encode([f"t{i}" for i in range(10)]).shape == (10, 8)
    finally:
        engine.close()


def test_close_finishes_queued_work_then_refuses_new_work():
    backbone = SlowBackbone(delay=0.05)
    engine = BatchingEngine(backbone, round_texts=2)
    futures = [engine.submit([f"text {i}", f"other {i}"]) for i in range(5)]
    engine.close()
    assert all(f.done() and f.result().shape == (2, 16) for f in futures)
    with pytest.raises(NotReady):
        engine.submit(["late"])


def test_an_encoding_failure_reaches_the_caller_and_the_worker_survives():
    class Flaky(HashingBackbone):
        def encode(self, texts):
            if "boom" in texts:
                raise RuntimeError("backbone failed")
            return super().encode(texts)

    engine = BatchingEngine(Flaky(dim=8))
    try:
        with pytest.raises(RuntimeError, match="backbone failed"):
            engine.encode(["boom"])
        assert engine.encode(["fine"]).shape == (1, 8)
    finally:
        engine.close()


def test_a_round_never_mixes_poolings():
    class Recording(HashingBackbone):
        def __init__(self):
            super().__init__(dim=16)
            self.gate, self.rounds = threading.Event(), []

        def encode(self, texts, token_weights=None):
            self.gate.wait()
            self.rounds.append((len(texts), token_weights is not None))
            return super().encode(texts, token_weights)

    backbone = Recording()
    sif = np.full(backbone.vocab_size, 0.5, dtype=np.float32)
    engine = BatchingEngine(backbone, round_texts=64)
    try:
        blocker = engine.submit(["held"])  # the worker waits on the gate with this round
        time.sleep(0.05)
        jobs = [engine.submit(["a b"] * 2, w) for w in (sif, sif, None, None, sif)]
        backbone.gate.set()
        results = [job.result(5) for job in jobs]
        blocker.result(5)
    finally:
        engine.close()
    assert backbone.rounds == [(1, False), (6, True), (4, False)]  # every job pooled like the first waiting one
    np.testing.assert_allclose(results[0], HashingBackbone(dim=16).encode(["a b"] * 2, sif), atol=1e-6)
    np.testing.assert_allclose(results[2], HashingBackbone(dim=16).encode(["a b"] * 2), atol=1e-6)


def test_a_cancelled_request_never_stops_the_encoder():
    """A caller that gives up (a timeout, a client gone at shutdown) cancels its future; the worker goes on."""
    backbone = SlowBackbone(delay=0.01)
    backbone.release.clear()  # the first round holds the worker while the others queue behind it
    engine = BatchingEngine(backbone, round_texts=1)
    try:
        first = engine.submit(["first"])
        time.sleep(0.05)
        given_up, queued = engine.submit(["given up"]), engine.submit(["queued"])
        assert given_up.cancel()
        backbone.release.set()
        assert first.result(5).shape == (1, 16) and queued.result(5).shape == (1, 16)
        assert engine.encode(["after"]).shape == (1, 16)
        assert engine.alive and engine.stats()["queued_texts"] == 0
        assert ["given up"] not in backbone.rounds_texts  # a cancelled job is never encoded
    finally:
        backbone.release.set()
        engine.close()


def test_a_cancelled_request_alone_in_the_queue_does_not_end_the_worker():
    backbone = SlowBackbone(delay=0.01)
    backbone.release.clear()
    engine = BatchingEngine(backbone, round_texts=1, request_timeout=5)
    try:
        first = engine.submit(["first"])
        time.sleep(0.05)
        assert engine.submit(["given up"]).cancel()  # the only job waiting
        backbone.release.set()
        first.result(5)
        assert engine.encode(["after"]).shape == (1, 16)
        assert engine.alive
    finally:
        backbone.release.set()
        engine.close()


def test_a_dead_worker_is_reported_and_refuses_work_instead_of_hanging():
    class Fatal(HashingBackbone):
        def encode(self, texts):
            if "fatal" in texts:
                raise SystemExit("the worker thread ends")  # not an Exception: escapes the per-round handler
            return super().encode(texts)

    engine = BatchingEngine(Fatal(dim=8))
    try:
        doomed = engine.submit(["fatal"])
        with pytest.raises(NotReady):
            doomed.result(5)  # its caller is answered, not left waiting
        deadline = time.monotonic() + 5
        while engine.alive and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not engine.alive
        with pytest.raises(NotReady, match="encoder"):
            engine.submit(["fine"])
    finally:
        engine.close()
