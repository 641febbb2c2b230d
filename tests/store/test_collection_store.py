"""Collections' settings in a real Redis: created once, taken whole, changed unless deleted meanwhile."""

from __future__ import annotations

import threading


def test_a_name_is_created_once_and_taken_whole(store):
    specs = store.collections
    assert specs.create("a", b"one") and not specs.create("a", b"two")
    assert specs.get("a") == b"one" and specs.all() == {"a": b"one"}
    assert specs.take("a") == b"one" and specs.take("a") is None and specs.get("a") is None


def test_concurrent_updates_all_land_and_a_deleted_one_is_not_revived(store):
    specs = store.collections
    specs.create("n", b"0")

    def add_one():
        for _ in range(25):
            assert specs.update("n", lambda old: str(int(old) + 1).encode())

    threads = [threading.Thread(target=add_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert specs.get("n") == b"100"  # WATCH retried every collision: no update lost
    specs.take("n")
    assert specs.update("n", lambda old: b"back") is False and specs.get("n") is None
