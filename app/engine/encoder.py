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
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from opentelemetry.context import Context

from app.backbones.base import Backbone
from app.core.errors import NotReady, Overloaded, RequestTimeout
from app.core.process_memory import release_free_memory
from app.core.tracing import current_context, round_span

# Set by the HTTP layer for the request it serves (and copied to the threads a request's work runs on): the encoder
# holds only requests to CE_REQUEST_TIMEOUT.
UNDER_REQUEST: ContextVar[bool] = ContextVar("under_request", default=False)

log = logging.getLogger(__name__)


@dataclass(eq=False)
class _Job:
    """One request's texts, encoded a share per round; answered whole when its last share is done."""

    texts: list[str]
    token_weights: np.ndarray | None = None  # a correction's pooling weights (SIF); a round shares one
    deadline: float = float("inf")  # monotonic seconds: past it, its caller has its 504 and nothing more is encoded
    future: Future[np.ndarray] = field(default_factory=Future)  # pending until answered; its caller may cancel it
    done: int = 0  # texts encoded so far, in order
    parts: list[np.ndarray] = field(default_factory=list)
    context: Context = field(default_factory=current_context)  # the request's trace, which its rounds are filed under

    @property
    def left(self) -> int:
        return len(self.texts) - self.done


RELEASE_AFTER_TEXTS = 256  # texts encoded since the last release before an idle encoder returns free memory


def text_tokens(text: str, max_length: int) -> int:
    """About how many tokens a text costs the backbone (a word piece is ~4 characters of English), to fill rounds
    by cost without tokenizing twice."""
    return min(max_length, 2 + len(text) // 4)


class BatchingEngine:
    """A bounded queue in front of the backbone; a worker encodes rounds that give every waiting request a share.

    A round takes texts from each request in turn, up to `round_texts` texts and `round_tokens` tokens, so a
    request of thousands of passages is encoded over many short rounds with every other request served between
    them (a fair share, not first come first served), and its deadline stops it between two rounds. The backbone
    sorts each round by length and batches it under its own token budget. Past `max_queue_texts` texts ahead of a
    request (counting each other request up to that one's size: its fair share), callers get Overloaded (429 with
    Retry-After) instead of growing memory without bound.
    """

    def __init__(
        self,
        backbone: Backbone | Callable[[], Backbone],
        *,
        max_queue_texts: int = 2048,
        round_texts: int = 64,
        round_tokens: int = 1024,
        load_timeout: float = 600.0,
        request_timeout: float | None = None,
        release_memory: Callable[[], object] = release_free_memory,
    ):
        self.max_queue_texts = max_queue_texts
        self.round_texts = round_texts
        self.round_tokens = round_tokens
        self.request_timeout = request_timeout  # seconds a caller waits for its vectors; None: no deadline
        self.on_round: Callable[[int, float], None] | None = None  # (texts, seconds) after each round: metrics
        self._release_memory = release_memory
        self._released_at = 0  # texts encoded when the heap's free pages were last handed back
        self._jobs: deque[_Job] = deque()
        self._queued_texts = 0
        self._cond = threading.Condition()
        self._closing = False
        self._stopped: str | None = None  # why the worker ended unexpectedly; it then refuses work
        self._seconds_per_text = 0.005  # refined as rounds complete; sizes Retry-After
        self._rounds = self._texts_done = self._texts_dropped = 0
        self._busy_seconds = 0.0
        # The worker builds the backbone itself: torch is then only ever run from one thread. Loading a
        # model in one thread and running it in another left two OpenMP pools fighting over two cores
        # (a single short text took 1.5-2x as long).
        factory = (lambda: backbone) if isinstance(backbone, Backbone) else backbone
        self.backbone: Backbone  # set by the worker, which builds it; __init__ returns once it has
        self._loaded = threading.Event()
        self._load_error: BaseException | None = None
        self._worker = threading.Thread(target=self._run, args=(factory,), name="encoder", daemon=True)
        self._worker.start()
        if not self._loaded.wait(load_timeout):
            raise NotReady(f"the backbone did not load within {load_timeout:.0f} s")
        if self._load_error is not None:
            raise self._load_error

    def submit(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> Future[np.ndarray]:
        """Queue texts; the future resolves to their float32 vectors, in order (pooled with `token_weights`).
        Cancelling it (its caller gave up) stops its encoding at the next round."""
        timeout = self.timeout()
        deadline = time.monotonic() + timeout if timeout else float("inf")
        job = _Job(list(texts), token_weights, deadline)
        with self._cond:
            if self._stopped is not None:
                raise NotReady(f"the encoder is not running ({self._stopped})")
            if self._closing:
                raise NotReady("the service is shutting down")
            ahead = sum(min(other.left, job.left) for other in self._jobs)  # what is encoded before it finishes
            if self._jobs and ahead + job.left > self.max_queue_texts:
                raise Overloaded(
                    f"{self._queued_texts} texts are waiting to be encoded; {ahead} of them would be encoded before "
                    f"these {job.left} (limit {self.max_queue_texts}); retry later",
                    retry_after=self.retry_after(),
                )
            self._jobs.append(job)
            self._queued_texts += job.left
            self._cond.notify()
        return job.future

    def encode(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        """Blocking form of submit(), for callers on worker threads (sync routes, CLI); RequestTimeout past
        the deadline (the job is then cancelled, so it is skipped if still queued)."""
        if not texts:
            return np.empty((0, self.backbone.dim), dtype=np.float32)
        future = self.submit(texts, token_weights)
        try:
            return future.result(self.timeout())
        except FutureTimeout:
            future.cancel()
            raise self._timed_out(len(texts)) from None

    async def encode_async(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        """encode() for the event loop: waits without holding a thread, under the same deadline."""
        if not texts:
            return np.empty((0, self.backbone.dim), dtype=np.float32)
        try:  # wait_for cancels the job on the deadline
            return await asyncio.wait_for(asyncio.wrap_future(self.submit(texts, token_weights)), self.timeout())
        except TimeoutError:
            raise self._timed_out(len(texts)) from None

    def timeout(self) -> float | None:
        """The deadline of the HTTP request this runs for (CE_REQUEST_TIMEOUT); work that serves no request (a
        command, a benchmark, a rebuild) has none, and finishes however loaded the machine is."""
        return self.request_timeout if UNDER_REQUEST.get() else None

    def _timed_out(self, count: int) -> RequestTimeout:
        return RequestTimeout(
            f"{count} texts were not encoded within {self.request_timeout:g} s (CE_REQUEST_TIMEOUT); "
            f"{self._queued_texts} texts are waiting"
        )

    @property
    def alive(self) -> bool:
        """Whether the worker is running and taking work: what /ready reports."""
        return self._worker.is_alive() and self._stopped is None and not self._closing

    def stats(self) -> dict[str, Any]:
        """Counters for /info and benchmarks: how full the rounds are and how busy the encoder is."""
        return {
            "queued_texts": self._queued_texts,
            "max_queue_texts": self.max_queue_texts,
            "rounds": self._rounds,
            "texts_encoded": self._texts_done,
            "texts_dropped": self._texts_dropped,  # of requests that timed out or were given up: never encoded
            "mean_round_texts": round(self._texts_done / self._rounds, 2) if self._rounds else 0.0,
            "encode_seconds": round(self._busy_seconds, 3),
        }

    def retry_after(self) -> int:
        """Seconds until the queue has likely drained, at least 1."""
        return max(1, int(self._queued_texts * self._seconds_per_text + 0.999))

    def _take_round(self) -> list[tuple[_Job, int]]:
        """(job, texts) shares of the next round: one text from each waiting job in turn, pooled alike, while the
        round has room (always at least one text); jobs cancelled or past their deadline are dropped first."""
        with self._cond:
            while True:
                self._drop_abandoned()
                if self._jobs:
                    break
                if self._closing:
                    return []
                self._cond.wait()
            weights = self._jobs[0].token_weights
            shares = self._shares([job for job in self._jobs if job.token_weights is weights])
            self._jobs.rotate(-1)  # the next round starts with the job after this round's first
            return shares

    def _shares(self, jobs: list[_Job]) -> list[tuple[_Job, int]]:
        """One text from each job in turn while the round has room in texts and tokens (at least one text)."""
        shares = dict.fromkeys(jobs, 0)
        texts = tokens = 0
        while any(shares[job] < job.left for job in jobs):
            for job in (j for j in jobs if shares[j] < j.left):
                cost = text_tokens(job.texts[job.done + shares[job]], self.backbone.max_length)
                if texts and (texts == self.round_texts or tokens + cost > self.round_tokens):
                    return [(j, n) for j, n in shares.items() if n]
                shares[job] += 1
                texts, tokens = texts + 1, tokens + cost
        return [(j, n) for j, n in shares.items() if n]

    def _drop_abandoned(self) -> None:
        """Forget jobs whose callers gave up or whose deadline passed: none of their texts is encoded any more."""
        now = time.monotonic()
        for job in [j for j in self._jobs if j.future.cancelled() or j.deadline < now]:
            if not job.future.cancelled():  # its caller may still be waiting, a hair behind the deadline: a 504
                job.future.set_exception(self._timed_out(len(job.texts)))
            self._jobs.remove(job)
            self._queued_texts -= job.left
            self._texts_dropped += job.left

    def _run(self, factory: Callable[[], Backbone]) -> None:
        try:
            self.backbone = factory()
        except BaseException as exc:  # handed to the constructor, which re-raises it in the caller
            self._load_error = exc
            return
        finally:
            self._loaded.set()
        try:
            while shares := self._take_round():  # empty only when closing and drained
                self._encode_round(shares)
                if not self._jobs and self._texts_done - self._released_at >= RELEASE_AFTER_TEXTS:
                    self._released_at = self._texts_done  # idle after much work: memory comes back
                    self._release_memory()
        except BaseException as exc:  # nothing a round raises should get here; if it does, fail loudly
            log.critical("the encoder thread stopped: %r", exc)
            self._stop(repr(exc))

    def _encode_round(self, shares: list[tuple[_Job, int]]) -> None:
        """Encode the round's texts together; answer each job whose last share it was. A failure is answered to
        each job with a share in it."""
        texts = [t for job, n in shares for t in job.texts[job.done : job.done + n]]
        weights = shares[0][0].token_weights
        start = time.perf_counter()
        try:
            with round_span([job.context for job, _ in shares], texts=len(texts), requests=len(shares)):
                vectors = self.backbone.encode(texts) if weights is None else self.backbone.encode(texts, weights)
        except Exception as exc:  # answered to every waiting caller, never kills the worker
            log.exception("encoding a round of %d texts failed", len(texts))
            self._finish(shares, exc)
            return
        except BaseException:
            self._finish(shares, NotReady("the encoder stopped while encoding this request"))
            raise
        elapsed = time.perf_counter() - start
        self._rounds += 1
        self._texts_done += len(texts)
        self._busy_seconds += elapsed
        self._seconds_per_text = 0.8 * self._seconds_per_text + 0.2 * elapsed / len(texts)
        if self.on_round is not None:
            self.on_round(len(texts), elapsed)
        offset = 0
        with self._cond:
            for job, n in shares:
                job.parts.append(vectors[offset : offset + n])
                job.done, offset = job.done + n, offset + n
                self._queued_texts -= n
                if not job.left:
                    self._jobs.remove(job)
                    if job.future.set_running_or_notify_cancel():  # False: its caller gave up meanwhile
                        job.future.set_result(np.concatenate(job.parts) if len(job.parts) > 1 else job.parts[0])

    def _finish(self, shares: list[tuple[_Job, int]], exc: BaseException) -> None:
        """Answer every job with a share in a failed round with the failure, and forget it."""
        with self._cond:
            for job, _ in shares:
                self._jobs.remove(job)
                self._queued_texts -= job.left
                if job.future.set_running_or_notify_cancel():
                    job.future.set_exception(exc)

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
