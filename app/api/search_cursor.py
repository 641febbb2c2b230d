"""/search's cursor: where the next page starts, for which query, and which state of the collection the pages before
it were cut from. Pages are cut from one ranking per (query, collection state), so a cursor is an offset that also
names what it belongs to: another query's cursor is refused, and a changed collection is said in the answer."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import asdict, dataclass

from app.core.errors import InvalidInput

ONLY_PAGING = {"k", "offset", "cursor", "explain", "include_vectors"}  # what may change between pages of one query


@dataclass(frozen=True)
class SearchCursor:
    offset: int  # the next page's first result
    query: str  # the digest of the query it pages (`query_digest`)
    state: str  # the collection's change-log position its pages were cut at

    def token(self) -> str:
        return base64.urlsafe_b64encode(json.dumps(asdict(self), separators=(",", ":")).encode()).decode()

    @classmethod
    def read(cls, token: str, query: str) -> SearchCursor:
        """The cursor a token holds, refused (422) when it is not one or belongs to another query."""
        try:
            fields = json.loads(base64.urlsafe_b64decode(token.encode()))
            cursor = cls(int(fields["offset"]), str(fields["query"]), str(fields["state"]))
        except (binascii.Error, ValueError, TypeError, KeyError, UnicodeError, RecursionError):
            raise InvalidInput("cursor: not a next_cursor this service gave") from None
        if cursor.offset < 0:
            raise InvalidInput("cursor: not a next_cursor this service gave")
        if cursor.query != query:
            raise InvalidInput("cursor: it pages another query; send the query its page was cut from")
        return cursor


def query_digest(fields: dict[str, object]) -> str:
    """What identifies one query across its pages: every field but those of paging."""
    kept = {name: value for name, value in fields.items() if name not in ONLY_PAGING}
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:24]
