"""One encoding thread that serves every request: texts from many clients share length-sorted batches."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field

import numpy as np

from app.backbones.base import Backbone
from app.core.errors import NotReady, Overloaded, RequestTimeout

log = logging.getLogger(__name__)


@dataclass
class _Job:
    texts: list[str]
    token_weights: np.ndarray | None = None  # a correction's pooling weights (SIF); a round shares one
    future: Future = field(default_factory=Future)


class BatchingEngine:
    """A bounded queue in front of the backbone; a worker takes what is waiting and encodes it together.

    The backbone sorts each round by length and batches it under a token budget, so many small requests
    cost about what one large one does. The queue is bounded in texts: past it, callers get Overloaded
    (429 with Retry-After) instead of growing memory without bound.
    """

    def __init__(
        self,
        backbone: Backbone | Callable[[], Backbone],
        *,
        max_queue_texts: int = 2048,
        round_texts: int = 64,
        load_timeout: float = 600.0,
        request_timeout: float | None = None,
    ):
        self.max_queue_texts = max_queue_texts
        self.round_texts = round_texts
        self.request_timeout = request_timeout  # seconds a caller waits for its vectors; None: no deadline
        self.on_round: Callable[[int, float], None] | None = None  # (texts, seconds) after each round: metrics
        self._jobs: deque[_Job] = deque()
        self._queued_texts = 0
        self._cond = threading.Condition()
        self._closing = False
        self._stopped: str | None = None  # why the worker ended unexpectedly; it then refuses work
        self._seconds_per_text = 0.005  # refined as rounds complete; sizes Retry-After
        self._rounds = self._texts_done = 0
        self._busy_seconds = 0.0
        # The worker builds the backbone itself: torch is then only ever run from one thread. Loading a
        # model in one thread and running it in another left two OpenMP pools fighting over two cores
        # (a single short text took 1.5-2x as long).
        factory = (lambda: backbone) if isinstance(backbone, Backbone) else backbone
        self.backbone: Backbone | None = None
        self._loaded = threading.Event()
        self._load_error: BaseException | None = None
        self._worker = threading.Thread(target=self._run, args=(factory,), name="encoder", daemon=True)
        self._worker.start()
        if not self._loaded.wait(load_timeout):
            raise NotReady(f"the backbone did not load within {load_timeout:.0f} s")
        if self._load_error is not None:
            raise self._load_error

    def submit(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> Future:
        """Queue texts; the future resolves to their float32 vectors, in order (pooled with `token_weights`)."""
        job = _Job(list(texts), token_weights)
        with self._cond:
            if self._stopped is not None:
                raise NotReady(f"the encoder is not running ({self._stopped})")
            if self._closing:
                raise NotReady("the service is shutting down")
            if self._queued_texts and self._queued_texts + len(job.texts) > self.max_queue_texts:
                raise Overloaded(
                    f"{self._queued_texts} texts are waiting to be encoded (limit {self.max_queue_texts}); retry later",
                    retry_after=self.retry_after(),
                )
            self._jobs.append(job)
            self._queued_texts += len(job.texts)
            self._cond.notify()
        return job.future

    def encode(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        """Blocking form of submit(), for callers on worker threads (sync routes, CLI); RequestTimeout past
        the deadline (the job is then cancelled, so it is skipped if still queued)."""
        if not texts:
            return np.empty((0, self.backbone.dim), dtype=np.float32)
        future = self.submit(texts, token_weights)
        try:
            return future.result(self.request_timeout)
        except FutureTimeout:
            future.cancel()
            raise self._timed_out(len(texts)) from None

    async def encode_async(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        """encode() for the event loop: waits without holding a thread, under the same deadline."""
        if not texts:
            return np.empty((0, self.backbone.dim), dtype=np.float32)
        try:  # wait_for cancels the job on the deadline
            return await asyncio.wait_for(asyncio.wrap_future(self.submit(texts, token_weights)), self.request_timeout)
        except TimeoutError:
            raise self._timed_out(len(texts)) from None

    def _timed_out(self, count: int) -> RequestTimeout:
        return RequestTimeout(
            f"{count} texts were not encoded within {self.request_timeout:g} s (CE_REQUEST_TIMEOUT); "
            f"{self._queued_texts} texts are waiting"
        )

    @property
    def alive(self) -> bool:
        """Whether the worker is running and taking work: what /ready reports."""
        return self._worker.is_alive() and self._stopped is None and not self._closing

    def stats(self) -> dict:
        """Counters for /info and benchmarks: how full the rounds are and how busy the encoder is."""
        return {
            "queued_texts": self._queued_texts,
            "max_queue_texts": self.max_queue_texts,
            "rounds": self._rounds,
            "texts_encoded": self._texts_done,
            "mean_round_texts": round(self._texts_done / self._rounds, 2) if self._rounds else 0.0,
            "encode_seconds": round(self._busy_seconds, 3),
        }

    def retry_after(self) -> int:
        """Seconds until the queue has likely drained, at least 1."""
        return max(1, int(self._queued_texts * self._seconds_per_text + 0.999))

    def _take_round(self) -> list[_Job]:
        """Whole jobs in arrival order, up to `round_texts` texts, pooled alike (always at least one job)."""
        with self._cond:
            taken, count = [], 0
            while not taken:  # every job waiting may have been cancelled: then wait for the next
                while not self._jobs and not self._closing:
                    self._cond.wait()
                if not self._jobs:  # closing and drained
                    return taken
                while self._jobs and (
                    not taken
                    or (count + len(self._jobs[0].texts) <= self.round_texts
                        and self._jobs[0].token_weights is taken[0].token_weights)
                ):  # fmt: skip
                    job = self._jobs.popleft()
                    # Claimed before encoding: a claimed future cannot be cancelled; one already cancelled (its
                    # caller gave up) is dropped here, so answering it later can never raise in this thread.
                    if job.future.set_running_or_notify_cancel():
                        taken.append(job)
                        count += len(job.texts)
                    else:
                        self._queued_texts -= len(job.texts)
            return taken

    def _run(self, factory: Callable[[], Backbone]) -> None:
        try:
            self.backbone = factory()
        except BaseException as exc:  # handed to the constructor, which re-raises it in the caller
            self._load_error = exc
            return
        finally:
            self._loaded.set()
        try:
            while jobs := self._take_round():  # empty only when closing and drained
                self._encode_round(jobs)
        except BaseException as exc:  # nothing a round raises should get here; if it does, fail loudly
            log.critical("the encoder thread stopped: %r", exc)
            self._stop(repr(exc))

    def _encode_round(self, jobs: list[_Job]) -> None:
        """Encode the round's texts together and answer each job; a failure is answered to each of them."""
        texts = [t for job in jobs for t in job.texts]
        weights = jobs[0].token_weights
        start = time.perf_counter()
        try:
            vectors = self.backbone.encode(texts) if weights is None else self.backbone.encode(texts, weights)
        except Exception as exc:  # answered to every waiting caller, never kills the worker
            log.exception("encoding a round of %d texts failed", len(texts))
            for job in jobs:
                job.future.set_exception(exc)
            return
        except BaseException:
            for job in jobs:
                job.future.set_exception(NotReady("the encoder stopped while encoding this request"))
            raise
        finally:
            with self._cond:
                self._queued_texts -= len(texts)
        elapsed = time.perf_counter() - start
        self._rounds += 1
        self._texts_done += len(texts)
        self._busy_seconds += elapsed
        self._seconds_per_text = 0.8 * self._seconds_per_text + 0.2 * elapsed / len(texts)
        if self.on_round is not None:
            self.on_round(len(texts), elapsed)
        offset = 0
        for job in jobs:
            job.future.set_result(vectors[offset : offset + len(job.texts)])
            offset += len(job.texts)

    def _stop(self, reason: str) -> None:
        """The worker is gone: refuse new work and answer every queued caller instead of leaving it waiting."""
        with self._cond:
            self._stopped = reason
            while self._jobs:
                job = self._jobs.popleft()
                if job.future.set_running_or_notify_cancel():
                    job.future.set_exception(NotReady(f"the encoder is not running ({reason})"))
            self._queued_texts = 0

    def close(self, timeout: float = 30.0) -> None:
        """Stop taking work, finish what is queued, then stop the worker."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._worker.join(timeout)
