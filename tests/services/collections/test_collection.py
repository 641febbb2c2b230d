"""An open collection counts the requests using it, so that its backbone is never unloaded under one."""

from __future__ import annotations

import threading

from app.services.collections.collection import Collection
from app.services.collections.spec import CollectionSpec


def test_requests_using_it_are_counted_and_released_even_on_error():
    services = object()
    collection = Collection(CollectionSpec("t", "hashing", "mean", None, "auto"), engine=None, services=services)
    with collection.using() as held, collection.using():
        assert held is services and collection.in_use == 2
    try:
        with collection.using():
            raise RuntimeError("the request failed")
    except RuntimeError:
        pass
    assert collection.in_use == 0

    def use_many():
        for _ in range(500):
            with collection.using():
                pass

    threads = [threading.Thread(target=use_many) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert collection.in_use == 0  # no count lost between threads
