"""Memory figures read from /proc, and the heap's free pages handed back after a large allocation."""

from __future__ import annotations

import numpy as np

from app.core.process_memory import release_free_memory, status_bytes


def test_resident_memory_is_read_in_bytes_and_an_unknown_field_is_none():
    rss, peak = status_bytes("VmRSS"), status_bytes("VmHWM")
    assert rss is not None and 10e6 < rss <= peak  # this test process holds numpy at least
    assert status_bytes("NoSuchField") is None


def test_freed_buffers_go_back_to_the_system():
    release_free_memory()  # what earlier tests freed is handed back first, so the growth below is this test's own
    before = status_bytes("RssAnon")
    chunks = [np.ones(1 << 16, dtype=np.float64) for _ in range(800)]  # 400 MB in 512 KB blocks
    grown = status_bytes("RssAnon")
    del chunks
    assert release_free_memory() is True  # glibc here
    assert grown - before > 200e6 and status_bytes("RssAnon") - before < (grown - before) / 3
