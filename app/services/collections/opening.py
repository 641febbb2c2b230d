"""Collections being opened in this process, each on a thread of its own: a request never waits out a backbone's
load (an ONNX export takes a minute); it waits a moment, then gets 503 with Retry-After."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from app.core.errors import NotReady, ServiceError

T = TypeVar("T")
RETRY_AFTER = 2  # seconds a client is asked to wait before asking again for a collection still opening
FAILURE_KEPT = 30.0  # seconds a failed open is answered from memory before the next request tries again


@dataclass
class Opening(Generic[T]):
    """One collection's opening: what it is doing now, and its outcome once it ends."""

    name: str
    future: Future[T] = field(default_factory=Future)
    step: str = "starting"
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None

    def progress(self) -> dict[str, Any]:
        return {"step": self.step, "seconds": round((self.ended or time.monotonic()) - self.started, 1)}


class Openings(Generic[T]):
    """At most one opening per name; a finished one hands over its result, a failed one its error for a while."""

    def __init__(self, open_one: Callable[[Opening[T]], T]):
        self._open_one = open_one
        self._openings: dict[str, Opening[T]] = {}
        self._lock = threading.Lock()

    def start(self, name: str) -> Opening[T]:
        """The opening of `name` under way (or failed a moment ago), else a new one on its own thread."""
        with self._lock:
            opening = self._openings.get(name)
            if opening is not None and (opening.ended is None or time.monotonic() - opening.ended < FAILURE_KEPT):
                return opening
            self._openings[name] = opening = Opening[T](name)
        threading.Thread(target=self._run, args=(opening,), name=f"open-{name}", daemon=True).start()
        return opening

    def _run(self, opening: Opening[T]) -> None:
        try:
            result = self._open_one(opening)
        except BaseException as exc:
            opening.ended = time.monotonic()
            if isinstance(exc, ServiceError):  # what Redis said (no such collection, failed): asked again next time
                self._drop(opening)
            opening.future.set_exception(exc)  # a load that failed here is answered for FAILURE_KEPT seconds
            return
        self._drop(opening)  # opened: the caller keeps it now; a later opening of the name starts afresh
        opening.future.set_result(result)

    def _drop(self, opening: Opening[T]) -> None:
        with self._lock:
            if self._openings.get(opening.name) is opening:
                del self._openings[opening.name]

    def wait(self, name: str, seconds: float | None) -> T:
        """The opened collection within `seconds` (None: however long it takes), else 503 with Retry-After."""
        opening = self.start(name)
        try:
            return opening.future.result(seconds)
        except FutureTimeout:
            raise NotReady(
                f"collection {name!r} is opening ({opening.step}, {opening.progress()['seconds']:g} s so far); "
                f"retry in {RETRY_AFTER} s",
                retry_after=RETRY_AFTER,
            ) from None
        except ServiceError:
            raise
        except Exception as exc:  # a backbone that would not load here, say: a 503 that says why
            raise NotReady(f"collection {name!r} could not open here: {exc}") from exc

    def current(self, name: str) -> Opening[T] | None:
        """The opening of `name` in this process, if one is under way."""
        opening = self._openings.get(name)
        return opening if opening is not None and opening.ended is None else None

    def forget(self, name: str) -> None:
        """A deleted collection's failure is not answered for a new one of the same name."""
        with self._lock:
            self._openings.pop(name, None)
