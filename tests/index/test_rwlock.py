"""The index's read-write lock: readers together, a writer alone, and a waiting writer is not starved."""

from __future__ import annotations

import threading
import time

from app.index.rwlock import ReadWriteLock


def test_readers_share_and_a_writer_excludes_them():
    lock, inside, most, guard = ReadWriteLock(), [0], [0], threading.Lock()
    barrier = threading.Barrier(4)

    def read():
        with lock.reading():
            with guard:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            barrier.wait(timeout=5)  # all four readers are inside at once
            with guard:
                inside[0] -= 1

    readers = [threading.Thread(target=read) for _ in range(4)]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    assert most[0] == 4
    log: list[str] = []

    def write(name):
        with lock.writing():
            log.append(f"{name} in")
            time.sleep(0.01)
            log.append(f"{name} out")

    writers = [threading.Thread(target=write, args=(n,)) for n in "ab"]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    assert log in (["a in", "a out", "b in", "b out"], ["b in", "b out", "a in", "a out"])  # never interleaved


def until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.001)


def test_a_waiting_writer_holds_back_new_readers():
    lock, order, release = ReadWriteLock(), [], threading.Event()

    def first_read():
        with lock.reading():
            release.wait(timeout=5)
            order.append("first reader out")

    def write():
        with lock.writing():
            order.append("writer")

    def late_read():
        with lock.reading():
            order.append("late reader")

    first = threading.Thread(target=first_read)
    first.start()
    until(lambda: lock._readers == 1)
    writer = threading.Thread(target=write)
    writer.start()
    until(lambda: lock._writers_waiting == 1)
    late = threading.Thread(target=late_read)
    late.start()
    until(lambda: len(lock._cond._waiters) == 2)  # the writer and the late reader both wait, the reader still in
    release.set()
    for t in (first, writer, late):
        t.join(timeout=5)
    assert order == ["first reader out", "writer", "late reader"]
