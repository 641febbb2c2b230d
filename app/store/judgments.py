"""Relevance judgments sent over HTTP, and the ranking tuned on them, per collection: bytes in, bytes out."""

from __future__ import annotations

import json
from typing import Any

from app.store.calls import KeyedStore, store_call, text

SEP = "\x1f"  # between a judgment's query and document id in its hash field (neither may hold it: control char)


class JudgmentStore(KeyedStore):
    """A hash per collection, field `query SEP document id`, value the grade; and the tuned ranking beside it."""

    def _key(self, collection_key: str) -> str:
        return self.owned_key("judgments", collection_key)

    def _ranking_key(self, collection_key: str) -> str:
        return self.owned_key("ranking", collection_key)

    @store_call
    def put(self, collection_key: str, judged: list[tuple[str, str, int]]) -> int:
        """Add or replace (query, document id, grade) judgments; how many the collection holds now."""
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(self._key(collection_key), mapping={f"{q}{SEP}{d}": g for q, d, g in judged})
        pipe.hlen(self._key(collection_key))
        return int(pipe.execute()[-1])

    @store_call
    def all(self, collection_key: str) -> list[tuple[str, str, int]]:
        """Every judgment, sorted by query then document id."""
        raw = self.client.hgetall(self._key(collection_key))
        found = [
            (query, doc_id, int(grade)) for field, grade in raw.items() for query, doc_id in [text(field).split(SEP, 1)]
        ]
        return sorted(found)

    @store_call
    def delete(self, collection_key: str, query: str | None = None) -> int:
        """Drop one query's judgments, or all of them; how many went."""
        if query is None:
            count = self.client.hlen(self._key(collection_key))
            self.client.delete(self._key(collection_key))
            return int(count)
        fields = [f for f in self.client.hkeys(self._key(collection_key)) if text(f).split(SEP, 1)[0] == query]
        return int(self.client.hdel(self._key(collection_key), *fields)) if fields else 0

    @store_call
    def publish_ranking(self, collection_key: str, record: dict[str, Any] | None) -> None:
        """The ranking every replica of the collection serves (None: back to its settings and rule)."""
        if record is None:
            self.client.delete(self._ranking_key(collection_key))
        else:
            self.client.set(self._ranking_key(collection_key), json.dumps(record))

    @store_call
    def published_ranking(self, collection_key: str) -> dict[str, Any] | None:
        data = self.read(lambda client: client.get(self._ranking_key(collection_key)))
        return json.loads(data) if data is not None else None

    @store_call
    def drop(self, collection_key: str) -> None:
        self.client.delete(self._key(collection_key), self._ranking_key(collection_key))
