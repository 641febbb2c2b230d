"""The key layout: every key that one transaction writes with another carries the same hash tag, so that Redis
Cluster places them in one slot (and a single Redis reads the tag as part of the name)."""

from __future__ import annotations

import hashlib

LAYOUT = "2"  # 1: untagged keys (before the cluster); 2: `{owner}` tagged; see store/migration.py


def tag(owner: str) -> str:
    """`{owner}`: Redis Cluster hashes only what the braces hold; an owner is a collection key or a fingerprint."""
    if "{" in owner or "}" in owner:
        raise ValueError(f"a key owner holds no braces: {owner!r}")
    return f"{{{owner}}}"


def owned(prefix: str, kind: str, owner: str, *rest: str) -> str:
    """`prefix:kind:{owner}[:rest...]`: a key of `owner`'s slot."""
    return ":".join((prefix, kind, tag(owner), *rest))


def unowned(prefix: str, kind: str, owner: str, *rest: str) -> str:
    """The same key in layout 1, before tags: what a migration renames."""
    return ":".join((prefix, kind, owner, *rest))


def shard_of(doc_id: str, count: int) -> int:
    """A stable hash (the same in every process and Python, unlike `hash`), so any process can route an id."""
    digest = hashlib.blake2b(doc_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % count


def partitioned(collection_key: str, parts: int) -> str:
    """The key of a collection kept in `parts` parts, each its own slot and change log (`shards: N`)."""
    return f"{collection_key}@{parts}" if parts else collection_key


def parts_of(collection_key: str) -> list[str]:
    """The keys a collection's documents live under: itself, or each of its parts (`key@N/n`)."""
    base, _, count = collection_key.rpartition("@")
    if not base or not count.isdigit():
        return [collection_key]
    return [f"{collection_key}/{n}" for n in range(int(count))]


def part_holding(collection_key: str, doc_id: str) -> str:
    """The key under which `doc_id` lives: the collection's own, or its part's."""
    parts = parts_of(collection_key)
    return parts[shard_of(doc_id, len(parts))]
