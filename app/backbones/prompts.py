"""A model's prompts: the prefixes its authors trained queries and documents with, read from its folder."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from app.core.errors import InvalidInput

DOCUMENT_NAMES = ("document", "passage", "corpus")  # what sentence-transformers' encode_document looks for, in order
QUERY_NAME = "query"


@dataclass(frozen=True)
class Prompts:
    """`prompts` and `default_prompt_name` of config_sentence_transformers.json, chosen as sentence-transformers
    chooses them: a literal prompt first, then a named one, then the default one."""

    named: Mapping[str, str] = field(default_factory=dict)
    default_name: str | None = None

    def text(self, name: str | None = None, literal: str | None = None) -> str:
        """The prefix a request asks for (422 for a name the model does not have, but "query" and "document" always
        name the model's query and document prompts, whatever it calls them); neither asked: the default."""
        if literal is not None:
            return literal
        if name is None:
            return self.named.get(self.default_name, "") if self.default_name else ""
        if name == QUERY_NAME and name not in self.named:  # the roles always answer, as encode_query does
            return self.query
        if name in DOCUMENT_NAMES and name not in self.named:  # ... and encode_document
            return self.document
        if name not in self.named:
            known = ", ".join(sorted(self.named)) or "none"
            raise InvalidInput(f"prompt_name {name!r}: this model's prompts are {known}")
        return self.named[name]

    @property
    def query(self) -> str:
        """What searches are encoded with: the "query" prompt, else the default one."""
        return self.named[QUERY_NAME] if QUERY_NAME in self.named else self.text()

    @property
    def document(self) -> str:
        """What documents are encoded with: the first of "document", "passage", "corpus", else the default one."""
        name = next((n for n in DOCUMENT_NAMES if n in self.named), None)
        return self.named[name] if name else self.text()

    def describe(self) -> dict[str, object]:
        """What /info shows: every prompt, the default, and what documents and searches get."""
        return {
            "prompts": dict(self.named),
            "default_prompt_name": self.default_name,
            "query": self.query,
            "document": self.document,
        }


NO_PROMPTS = Prompts()


def prompted(prompt: str, texts: Sequence[str]) -> list[str]:
    """The texts as the model reads them: the prompt before each (sentence-transformers concatenates likewise)."""
    return [prompt + text for text in texts] if prompt else list(texts)


def with_prompt(encode: Callable[..., np.ndarray], prompt: str) -> Callable[..., np.ndarray]:
    """`encode` with the prompt before each text, its other arguments passed on: how documents are encoded."""
    if not prompt:
        return encode

    def prompted_encode(texts: Sequence[str], *args: object, **kwargs: object) -> np.ndarray:
        return encode(prompted(prompt, texts), *args, **kwargs)

    return prompted_encode
