"""Encoding: texts to vectors in the served correction's space, for /embed, /similarity and OpenAI's API."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

import numpy as np

from app.backbones.prompts import prompted
from app.core.config import Settings
from app.core.errors import BadRequest, InvalidInput, TooLarge
from app.core.names import Method
from app.correction.pipeline import Correction, l2_normalize, pooling_weights, project
from app.engine.encoder import BatchingEngine
from app.index.live import ServedIndex

P = ParamSpec("P")
R = TypeVar("R")

# A request with more text than this is tokenized (limits, usage) on a worker thread: long texts take
# milliseconds each to tokenize, which on the event loop would hold up every other request. One thread: many
# such requests at once queue there rather than take every core from the encoder and the loop.
OFF_LOOP_CHARS = 4096
_HEAVY_WORK = ThreadPoolExecutor(1, thread_name_prefix="heavy-request-work")


async def _off_loop_if(heavy: bool, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """`fn(...)` on the worker thread when it is heavy, else right here (a thread hop costs more than small work)."""
    if not heavy:
        return fn(*args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_HEAVY_WORK, functools.partial(fn, *args, **kwargs))


def _long(texts: Sequence[str]) -> bool:
    return sum(map(len, texts)) > OFF_LOOP_CHARS


class EmbeddingService:
    """Encodes texts through the shared encoder and corrects them; knows nothing of documents or the index."""

    def __init__(self, settings: Settings, engine: BatchingEngine, served: ServedIndex):
        self.settings = settings
        self.engine = engine
        self.backbone = engine.backbone
        self._served = served

    @property
    def correction(self) -> Correction | None:
        return self._served.current.correction

    def check_texts(self, texts: Sequence[str], what: str = "texts") -> Sequence[str]:
        """The per-request limits on count and length: a 422 naming the first text over them."""
        limits = self.settings
        if len(texts) > limits.max_texts:
            raise InvalidInput(f"{what}: {len(texts)} items, at most {limits.max_texts} per request")
        for i, text in enumerate(texts):
            if len(text) > limits.max_text_chars:
                raise InvalidInput(f"{what}[{i}]: {len(text)} characters, at most {limits.max_text_chars}")
        return texts

    def check_tokens(self, texts: Sequence[str], what: str = "texts", *, truncated: bool = True) -> None:
        """A 413 before any encoding for more than CE_MAX_REQUEST_TOKENS tokens: each text counted up to the token
        limit when it is cut there, whole when it is indexed as passages. What one request may cost is bounded, so
        it can finish within its deadline."""
        budget, limit = self.settings.max_request_tokens, self.backbone.max_length

        def bound(n: int) -> int:
            return min(n, limit) if truncated else n

        # A token covers at least one byte: a request of fewer bytes than the budget is not counted.
        if sum(bound(len(t.encode()) + 4) for t in texts) <= budget:
            return
        total = sum(map(bound, self.backbone.token_counts(texts)))
        if total > budget:
            raise TooLarge(
                f"{what}: {total:,} tokens to encode, at most {budget:,} per request "
                "(CE_MAX_REQUEST_TOKENS); send fewer or shorter texts"
            )

    @staticmethod
    def _dedupe(texts: Sequence[str]) -> tuple[list[str], list[int] | None]:
        """Distinct texts, and the row of each input among them (None when all are distinct)."""
        unique = list(dict.fromkeys(texts))
        if len(unique) == len(texts):
            return unique, None
        row = {t: i for i, t in enumerate(unique)}
        return unique, [row[t] for t in texts]

    def encode_raw(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        """The backbone's vectors, unnormalized; each distinct text is encoded once. `token_weights`: SIF's pooling."""
        unique, rows = self._dedupe(texts)
        vectors = self.engine.encode(unique, token_weights)
        return vectors if rows is None else vectors[rows]

    async def encode_raw_async(self, texts: Sequence[str], token_weights: np.ndarray | None = None) -> np.ndarray:
        """encode_raw() for the event loop: waits on the encoder without holding a thread."""
        unique, rows = self._dedupe(texts)
        vectors = await self.engine.encode_async(unique, token_weights)
        return vectors if rows is None else vectors[rows]

    def prompt(self, name: str | None = None, literal: str | None = None) -> str:
        """The prefix a request asks for by name or literally (422 for a name the model lacks); else the model's
        default prompt, if it has one."""
        return self.backbone.prompts.text(name, literal)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Passages' raw vectors, each with the model's document prompt (stored texts and ids never see it)."""
        return self.encode_raw(prompted(self.backbone.prompts.document, texts))

    def query_in_space(self, texts: Sequence[str], correction: Correction | None) -> np.ndarray:
        """Queries in `correction`'s space, each with the model's query prompt."""
        return self.in_space(prompted(self.backbone.prompts.query, texts), correction)

    async def query_in_space_async(self, texts: Sequence[str], correction: Correction | None) -> np.ndarray:
        return await self.in_space_async(prompted(self.backbone.prompts.query, texts), correction)

    def in_space(self, texts: Sequence[str], correction: Correction | None) -> np.ndarray:
        """`texts` in `correction`'s space: encoded with its pooling (SIF's weights, if any), then mapped."""
        return project(self.encode_raw(texts, pooling_weights(correction)), correction)

    async def in_space_async(self, texts: Sequence[str], correction: Correction | None) -> np.ndarray:
        """in_space() for the event loop: waits on the encoder without holding a thread."""
        return project(await self.encode_raw_async(texts, pooling_weights(correction)), correction)

    def find_truncated(self, texts: Sequence[str], what: str = "texts", *, truncate: bool = True) -> list[int]:
        """Indices of texts over the backbone's token limit; with `truncate` false, the first is a 422."""
        limit = self.backbone.max_length
        # A token covers at least one byte, so a short text cannot be over; only long ones are counted.
        long = [i for i, t in enumerate(texts) if len(t.encode()) + 4 > limit]
        counts = self.backbone.token_counts([texts[i] for i in long]) if long else []
        over = [(i, n) for i, n in zip(long, counts, strict=True) if n > limit]
        if over and not truncate:
            i, n = over[0]
            raise InvalidInput(f'{what}[{i}]: {n} tokens, at most {limit}; send "truncate": true to cut it there')
        return [i for i, _ in over]

    async def embed_async(
        self,
        texts: Sequence[str],
        *,
        corrected: bool = True,
        normalize: bool = True,
        truncate: bool = True,
        dims: int | None = None,
        space: str = "similarity",
        prompt: str = "",
    ) -> tuple[np.ndarray, str | None, list[int]]:
        """Vectors, the id of the correction that made them (None when uncorrected), truncated indices.

        `dims` keeps the first ones (whitening's axes come by variance), as OpenAI's `dimensions` asks; `space`
        "search" maps them as the collection's index does (its correction's search space); `prompt` goes before
        each text (what the model reads, counted in its tokens).
        """
        self.check_texts(texts)
        texts = prompted(prompt, texts)
        await _off_loop_if(_long(texts), self.check_tokens, texts)
        cut = await _off_loop_if(_long(texts), self.find_truncated, texts, truncate=truncate)
        correction = self.correction if corrected else None
        if correction is not None and space == "search":
            correction = correction.search
        method = correction.artifact.method if correction else Method.NONE
        if dims is not None and method != Method.WHITENING:
            raise BadRequest(
                f"dimensions: the served space ({method}) is not ordered by variance, so its first {dims} axes "
                "are not a smaller version of it; only a whitening correction's are"
            )
        raw = await self.encode_raw_async(texts, pooling_weights(correction))
        vectors = await _off_loop_if(
            self._heavy(correction, len(raw)), project, raw, correction, normalize=normalize and dims is None
        )
        if dims is not None:
            if not 1 <= dims <= vectors.shape[1]:
                raise InvalidInput(f"dimensions must be within [1, {vectors.shape[1]}], got {dims}")
            vectors = l2_normalize(vectors[:, :dims]) if normalize else vectors[:, :dims]
        return vectors, (correction.id if correction else None), cut

    async def tokenize_async(self, texts: Sequence[str]) -> list[dict[str, Any]]:
        """Each text's tokens and ids as the backbone encodes them, and its whole count."""
        self.check_texts(texts)
        backbone = self.backbone

        def tokenize() -> list[dict[str, Any]]:
            counts = backbone.token_counts(texts)
            rows = zip(backbone.tokens_of(texts), backbone.token_ids(texts), counts, strict=True)
            return [{"tokens": t, "ids": i, "count": n, "truncated": n > backbone.max_length} for t, i, n in rows]

        return await _off_loop_if(_long(texts), tokenize)

    def token_count(self, texts: Sequence[str]) -> int:
        """Tokens the backbone sees for these texts (after truncation), for usage reports."""
        limit = self.backbone.max_length
        return sum(min(n, limit) for n in self.backbone.token_counts(texts))

    async def token_count_async(self, texts: Sequence[str]) -> int:
        """token_count() off the event loop when the texts are long."""
        return await _off_loop_if(_long(texts), self.token_count, texts)

    @staticmethod
    def _heavy(correction: Correction | None, rows: int) -> bool:
        """Whether correcting `rows` vectors is worth a thread: a flow's layers, or a large batch."""
        return correction is not None and (correction.has_flow or rows > 256)

    async def similarity_async(
        self, left: Sequence[str], right: Sequence[str], *, with_raw: bool = True, prompt: str = ""
    ) -> tuple[np.ndarray, np.ndarray | None, str | None]:
        """Corrected cosine of each (left[i], right[i]), the raw cosine (None unless `with_raw`), the correction id.

        A correction that pools its own way (SIF) needs a second encoding for the raw cosine: only if asked.
        """
        self.check_texts(left, "pairs (first texts)")  # the limit counts pairs, not texts
        self.check_texts(right, "pairs (second texts)")
        texts, correction, n = prompted(prompt, [*left, *right]), self.correction, len(left)
        await _off_loop_if(_long(texts), self.check_tokens, texts)
        weights = pooling_weights(correction)
        pooled = await self.encode_raw_async(texts, weights)
        raw = pooled if weights is None else (await self.encode_raw_async(texts) if with_raw else None)
        y = await _off_loop_if(self._heavy(correction, len(pooled)), project, pooled, correction)
        scores = np.sum(y[:n] * y[n:], axis=1)
        raw_unit = None if raw is None else l2_normalize(raw)
        raw_scores = None if raw_unit is None else np.sum(raw_unit[:n] * raw_unit[n:], axis=1)
        return scores, raw_scores, (correction.id if correction else None)
