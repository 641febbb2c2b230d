"""The index of a process that only writes (`python -m app index`, the CLI): the servers follow its writes."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from app.correction.pipeline import Correction
from app.index.builder import IndexBuilder
from app.index.integrity import IntegrityCheck
from app.index.search_index import SearchIndex
from app.store.documents import DocumentRecord


class WriterIndex:
    """A writer's index (`python -m app index`): an empty index that follows nothing; the servers follow its writes."""

    def __init__(self, builder: IndexBuilder, correction: Correction | None):
        self.builder = builder
        self.collection_key = builder.collection_key
        self.current = builder.empty(correction)
        self._lock = threading.Lock()
        self.integrity: IntegrityCheck | None = None  # it holds nothing to compare with the store

    @contextmanager
    def writing(self) -> Iterator[SearchIndex]:
        with self._lock:
            yield self.current

    def wrote(self, index: SearchIndex, records: Sequence[DocumentRecord], change: str) -> None:
        """Nothing to index: a writer's documents reach the servers through the change log."""

    def snapshot(self) -> None:
        """A writer keeps no index, so there is nothing to write."""

    def close(self) -> None:
        """Nothing runs in the background."""

    def status(self) -> dict[str, Any]:
        return self.current.dense.describe()
