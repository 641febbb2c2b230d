"""API keys with scopes: what a key may do (read, or read and write) and on which collections."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

Scope = Literal["read", "write"]
EVERY = "*"  # what a service-wide route acts on: every collection (no collection's name can be this)


class ApiKey(BaseModel):
    """One entry of CE_API_KEYS: a bare token is a write key on every collection, as before scopes existed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: SecretStr
    scope: Scope = Field("write", description="read: search, embed, similarity, tokenize, get, info; write: all.")
    collections: tuple[str, ...] | None = Field(None, min_length=1, description="Only these collections; None: all.")

    @model_validator(mode="before")
    @classmethod
    def _bare_token(cls, value: Any) -> Any:
        return {"key": value} if isinstance(value, str | SecretStr) else value

    @model_validator(mode="after")
    def _not_blank(self) -> ApiKey:
        if not self.key.get_secret_value().strip():
            raise ValueError("a CE_API_KEYS key must be a non-blank token")
        return self

    def covers(self, collection: str) -> bool:
        return self.collections is None or collection in self.collections

    def refusal(self, needs: Scope, collection: str | None, what: str) -> str | None:
        """Why this key may not do `what` (a write or a read) on `collection`, or on every collection when it is
        EVERY (the service-wide routes: creating one, /info, /metrics); None when it may. None as `collection`: the
        request touches none (a probe, or a list the route filters for the key)."""
        if needs == "write" and self.scope == "read":
            return f"this key is read-only: {what} needs a write key"
        if self.collections is None or collection is None:
            return None
        if collection == EVERY:
            return f"this key is limited to collections {', '.join(self.collections)}: {what} needs a key for all"
        if not self.covers(collection):
            return f"this key is limited to collections {', '.join(self.collections)}: not {collection!r}"
        return None
