"""The lexical index rebuilt from the stored texts once writes pause: BM25's statistics then count no deleted or
replaced version (tantivy drops those only when a background merge happens to), so every replica scores alike."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from app.index.builder import IndexBuilder
from app.index.lexical import LexicalIndex
from app.index.search_index import SearchIndex

log = logging.getLogger(__name__)
QUIET_FOLLOWS = 3  # follower steps with no new change-log entry before a lexical index with dead versions is rebuilt


def rebuilt_lexical(builder: IndexBuilder) -> tuple[LexicalIndex, str]:
    """A new lexical index of the stored texts alone, and the change-log entry it reflects at least."""
    applied = builder.store.changes.last_id(builder.collection_key)
    lexical = builder.new_lexical()
    if lexical is None:
        raise RuntimeError("a writer keeps no lexical index to rebuild")
    try:
        for batch in builder.store.documents.scan(builder.collection_key):
            lexical.upsert([d.id for d in batch], [d.text for d in batch])
        lexical.commit()
    except BaseException:
        lexical.close()
        raise
    return lexical, applied


def replay_lexical(builder: IndexBuilder, lexical: LexicalIndex, after: str, until: str) -> None:
    """Apply the change-log entries in (after, until] to a lexical index alone (raises ChangeLogGap)."""
    for change in builder.changes(after, until):
        stored = builder.read_records(change)
        lexical.remove([d for d, r in zip(builder.ids_in(change), stored, strict=True) if r is None])
        kept = [r for r in stored if r is not None]
        lexical.upsert([r.id for r in kept], [r.text for r in kept], replaced=len(kept))
    lexical.commit()


def compact(
    builder: IndexBuilder, index: SearchIndex, lock: threading.RLock, current: Callable[[], SearchIndex]
) -> bool:
    """Rebuild `index`'s lexical index outside `lock`, then, holding it, bring both to the same change-log entry and
    swap the new one in; False when `index` stopped being the served one (`current()`) meanwhile.

    The served index is caught up first: this process's own writes made during the rebuild are then behind
    `index.applied` too, so the replay gives them to the new index (they were only ever in the old one)."""
    started = time.monotonic()
    fresh, applied = rebuilt_lexical(builder)
    with lock:
        if current() is not index:
            fresh.close()
            return False
        try:
            builder.catch_up(index)
            replay_lexical(builder, fresh, applied, index.applied)
        except BaseException:
            fresh.close()
            raise
        old, index.lexical = index.lexical, fresh
    dead = old.dead if old is not None else 0
    if old is not None:
        old.close()  # a search still holding it reads files already open
    log.info("lexical index rebuilt in %.2f s: %d dead versions dropped", time.monotonic() - started, dead)
    return True
