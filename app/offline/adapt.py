"""Unsupervised adaptation of the backbone to a corpus (SimCSE, ConSERT, and/or the embedding regularizer of
Gao et al.), kept only if it helps.

Two views of each sentence are encoded with the served pooling; the other sentences of the batch are the
negatives (InfoNCE at temperature 0.05). SimCSE's views differ by dropout alone; ConSERT's by the chosen
augmentations. The model scoring best on the tuning pairs (as served: with the `auto` correction on top, by
default), checked at the start, every `eval_steps` and at each epoch's end, is the one kept: adaptation, like a
correction, must not make similarity worse.
"""

from __future__ import annotations

import copy
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from app.backbones.pooling import hidden_states, pool
from app.core.names import Pooling
from app.correction.selection import TuningPairs, select_for
from app.correction.stats import CovarianceStats
from app.offline.datasets import DataFileError, Pairs
from app.offline.evaluation import spearman_x100
from app.offline.regularization import embedding_cosine, regularization

AUGMENTS = ("dropout", "shuffle", "token-cutoff", "feature-cutoff")
DEFAULT_AUGMENTS = {"simcse": ("dropout",), "consert": ("shuffle", "feature-cutoff"), "none": ()}  # ConSERT's best pair
TOKEN_CUTOFF, FEATURE_CUTOFF = 0.15, 0.2  # share of tokens / of embedding features zeroed (ConSERT's rates)


@dataclass(frozen=True)
class AdaptConfig:
    method: str = "simcse"
    pooling: str = Pooling.MEAN
    epochs: int = 1
    batch_size: int = 64
    lr: float = 3e-5
    temperature: float = 0.05
    max_length: int = 64
    seconds: float | None = None  # stop training after this long (the best model so far is kept)
    eval_steps: int | None = None  # also score on the tuning pairs every this many steps
    augment: tuple[str, ...] = ()  # default: the method's own (DEFAULT_AUGMENTS)
    head: str = "none"  # "mlp": SimCSE's dense + tanh over the pooling while training, dropped afterwards
    seed: int = 0
    regularize: str = "none"  # "embedding": Gao et al.'s penalty on the embedding rows' mean cosine, added
    reg_weight: float = 1.0

    @property
    def views(self) -> tuple[str, ...]:
        chosen = self.augment or DEFAULT_AUGMENTS[self.method]
        if self.method == "none" and self.regularize == "none":
            raise ValueError("nothing to train: --method none needs --regularize embedding")
        unknown = sorted(set(chosen) - set(AUGMENTS))
        if unknown:
            raise ValueError(f"unknown augmentation {', '.join(unknown)}; choose from {', '.join(AUGMENTS)}")
        return tuple(chosen)


@dataclass
class AdaptResult:
    """The best weights found, how they scored, and what training did."""

    state: dict[str, Any] = field(repr=False)
    start_score: float
    best_score: float
    best_step: int
    steps: int
    seconds: float
    losses: list[float] = field(repr=False, default_factory=list)
    penalties: list[float] = field(repr=False, default_factory=list)  # the embedding rows' mean cosine, per step
    scores: list[tuple[int, float]] = field(default_factory=list)

    @property
    def improved(self) -> bool:
        return self.best_step > 0 and self.best_score > self.start_score


def _hidden(
    model: Any,
    input_ids: torch.Tensor,
    mask: torch.Tensor,
    types: torch.Tensor | None,
    pooling: str,
    views: Sequence[str],
    training: bool,
) -> torch.Tensor:
    """One view of a batch: the augmentations on the input embeddings, then the encoder and the pooling."""
    if training and "shuffle" in views:  # the order of each text's own tokens, [CLS] and [SEP] kept in place
        input_ids = input_ids.clone()
        for row, n in enumerate(mask.sum(1).tolist()):
            inner = torch.randperm(n - 2) + 1 if n > 3 else torch.arange(1, n - 1)
            input_ids[row, 1 : n - 1] = input_ids[row, inner]
    embeds = model.embeddings.word_embeddings(input_ids)
    if training and "token-cutoff" in views:
        keep = (torch.rand(mask.shape) >= TOKEN_CUTOFF).to(embeds.dtype)
        keep[:, 0] = 1.0
        embeds = embeds * keep.unsqueeze(-1)
    if training and "feature-cutoff" in views:
        keep = (torch.rand(embeds.shape[0], 1, embeds.shape[-1]) >= FEATURE_CUTOFF).to(embeds.dtype)
        embeds = embeds * keep
    return pool(pooling, hidden_states(model, pooling, mask, types, inputs_embeds=embeds), mask)


def training_head(kind: str, dim: int) -> torch.nn.Module:
    """What the loss sees on top of the pooling; an MLP there takes the contrastive task's own geometry with it."""
    if kind == "none":
        return torch.nn.Identity()
    if kind == "mlp":
        return torch.nn.Sequential(torch.nn.Linear(dim, dim), torch.nn.Tanh())
    raise ValueError(f"unknown head {kind}; choose none or mlp")


def _batch(tokenizer: Any, texts: Sequence[str], max_length: int) -> Any:
    enc = tokenizer(list(texts), padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    return enc["input_ids"], enc["attention_mask"], enc.get("token_type_ids")


@torch.inference_mode()
def encode(
    model: Any, tokenizer: Any, texts: Sequence[str], pooling: str, *, batch_size: int = 128, max_length: int = 128
) -> np.ndarray:
    """Vectors of `texts` with the model in eval mode (no augmentation): what the served backbone would give."""
    model.eval()
    out = []
    for start in range(0, len(texts), batch_size):
        ids, mask, types = _batch(tokenizer, texts[start : start + batch_size], max_length)
        out.append(_hidden(model, ids, mask, types, pooling, (), training=False).float().numpy())
    return np.concatenate(out) if out else np.empty((0, model.config.hidden_size), dtype=np.float32)


def held_out_pairs(pairs: Sequence[Pairs], corpus: set[str]) -> tuple[list[Pairs], int]:
    """The tuning pairs with every pair sharing a sentence with the corpus dropped, and how many were: the
    guard must judge sentences the model did not train on."""
    corpus = {s.strip() for s in corpus}
    kept = [p.without(corpus) for p in pairs]
    kept = [p for p in kept if len(p)]
    dropped = sum(map(len, pairs)) - sum(map(len, kept))
    if not kept:
        raise DataFileError(
            f"all {dropped} tuning pairs share a sentence with the corpus: pass --tune-pairs "
            "files it does not hold (or --keep-seen-pairs)"
        )
    return kept, dropped


@dataclass
class TuningScorer:
    """Rates the weights being trained on labelled pairs: raw cosine, or as `auto` would correct them (served).

    The `auto` figure fits the correction on the pairs' own sentences and picks it on the pairs, as `fit` would:
    an adaptation that leaves the correction nothing to do can score best raw and still serve worse.
    """

    model: torch.nn.Module
    tokenizer: object
    pairs: Sequence[Pairs]
    pooling: str
    select: str = "auto"  # or "raw"
    log: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        left = [t for p in self.pairs for t in p.left]
        right = [t for p in self.pairs for t in p.right]
        self._unique = list(dict.fromkeys(left + right))  # each sentence encoded once per check
        row = {t: i for i, t in enumerate(self._unique)}
        self._left, self._right = [row[t] for t in left], [row[t] for t in right]
        self._gold = np.concatenate([p.scores for p in self.pairs])

    def __call__(self) -> float:
        vectors = encode(self.model, self.tokenizer, self._unique, self.pooling)
        tuning = TuningPairs(vectors[self._left], vectors[self._right], self._gold)
        chosen = select_for(CovarianceStats(vectors.shape[1]).update(vectors), tuning).chosen
        raw = spearman_x100(*tuning.arrays)
        self.log.append({"raw": round(raw, 2), "auto": round(chosen.score, 2), "auto_method": chosen.method})
        return raw if self.select == "raw" else chosen.score


def step_loss(
    model: Any, head: torch.nn.Module, tokenizer: Any, batch: Sequence[str], config: AdaptConfig
) -> torch.Tensor:
    """InfoNCE between two views of the batch (none with method "none"), plus the regularizer's penalty."""
    loss = torch.zeros(())
    if config.method != "none":
        views = config.views
        model.train() if "dropout" in views else model.eval()
        ids, mask, types = _batch(tokenizer, batch, config.max_length)
        left = head(_hidden(model, ids, mask, types, config.pooling, views, training=True))
        right = head(_hidden(model, ids, mask, types, config.pooling, views, training=True))
        sims = torch.nn.functional.cosine_similarity(left.unsqueeze(1), right.unsqueeze(0), dim=-1)
        loss = torch.nn.functional.cross_entropy(sims / config.temperature, torch.arange(len(ids)))
    penalty = regularization(model, config.regularize, config.reg_weight)
    return loss if penalty is None else loss + penalty


def adapt(
    model: Any,
    tokenizer: Any,
    sentences: Sequence[str],
    score: Callable[[], float],
    config: AdaptConfig,
    *,
    progress: bool = True,
) -> AdaptResult:
    """Train `model` in place on `sentences`; `score()` rates the current weights on the tuning pairs."""
    config.views  # noqa: B018 - an unknown augmentation, or nothing to train, stops here
    torch.manual_seed(config.seed)
    order = random.Random(config.seed)
    texts = list(dict.fromkeys(s for s in sentences if s.strip()))
    head = training_head(config.head, model.config.hidden_size)
    optimizer = torch.optim.AdamW([*model.parameters(), *head.parameters()], lr=config.lr)
    started = time.monotonic()
    start_score = score()
    if progress:
        tqdm.write(f"start: tuning score {start_score:.2f}", file=sys.stderr)
    best = (start_score, 0, copy.deepcopy(model.state_dict()))
    result = AdaptResult({}, start_score, start_score, 0, 0, 0.0, scores=[(0, round(start_score, 2))])
    per_epoch = max(1, len(texts) // config.batch_size)

    def check(step: int) -> None:
        nonlocal best
        value = score()
        result.scores.append((step, round(value, 2)))
        if value > best[0]:
            best = (value, step, copy.deepcopy(model.state_dict()))
        if progress:
            tqdm.write(f"step {step}: tuning score {value:.2f}, best {best[0]:.2f} (step {best[1]})", file=sys.stderr)

    with tqdm(
        total=per_epoch * config.epochs, desc=f"adapt ({config.method})", unit="step", disable=not progress
    ) as bar:
        for _ in range(config.epochs):
            order.shuffle(texts)
            for start in range(0, per_epoch * config.batch_size, config.batch_size):
                if config.seconds is not None and time.monotonic() - started > config.seconds:
                    break
                loss = step_loss(model, head, tokenizer, texts[start : start + config.batch_size], config)
                result.penalties.append(embedding_cosine(model).item())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                result.steps += 1
                result.losses.append(loss.item())
                bar.update(1)
                bar.set_postfix(loss=f"{result.losses[-1]:.3f}")
                if config.eval_steps and result.steps % config.eval_steps == 0:
                    check(result.steps)
            if not result.scores or result.scores[-1][0] != result.steps:
                check(result.steps)  # the end of each epoch (or of the time limit)
            if config.seconds is not None and time.monotonic() - started > config.seconds:
                break
    result.best_score, result.best_step, result.state = best
    result.seconds = round(time.monotonic() - started, 1)
    model.load_state_dict(result.state)
    model.eval()
    return result
