"""The key layout: every key that one transaction writes with another carries the same hash tag, so that Redis
Cluster places them in one slot (and a single Redis reads the tag as part of the name)."""

from __future__ import annotations

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
