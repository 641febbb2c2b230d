"""Poolings: the hidden states of a transformer turned into one vector per text."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from app.core.names import TOKEN_AVERAGES, Pooling

if TYPE_CHECKING:  # tensors' own methods do the work, whatever module made them
    import torch


def pooling_named(name: str) -> Pooling:
    """The pooling a setting or an option names; a clear error for any other name."""
    try:
        return Pooling(name)
    except ValueError:
        raise ValueError(f"unknown pooling {name!r}; choose one of {', '.join(Pooling)}") from None


def hidden_states(
    model: Any, pooling: str, mask: Any, token_type_ids: Any, *, input_ids: Any = None, inputs_embeds: Any = None
) -> tuple[Any, ...]:
    """What `pool` needs from a transformer for a pooling: the input embeddings alone (embedding_avg), every layer's
    output (first_last_avg), else the last layer's."""
    pooling = pooling_named(pooling)
    if pooling == Pooling.EMBEDDING_AVG and model.config.model_type == "bert":  # no transformer layer at all
        return (model.embeddings(input_ids=input_ids, inputs_embeds=inputs_embeds, token_type_ids=token_type_ids),)
    if pooling == Pooling.EMBEDDING_AVG:  # other embeddings modules differ in arguments: the model's first state
        inputs = {"input_ids": input_ids, "inputs_embeds": inputs_embeds, "attention_mask": mask}
        if accepts_token_types(model):
            inputs["token_type_ids"] = token_type_ids
        return (model(**inputs, output_hidden_states=True).hidden_states[0],)
    inputs = {"input_ids": input_ids, "inputs_embeds": inputs_embeds, "attention_mask": mask}
    if accepts_token_types(model):  # DistilBERT, MPNet and ModernBERT take none
        inputs["token_type_ids"] = token_type_ids
    out = model(**inputs, output_hidden_states=pooling == Pooling.FIRST_LAST_AVG)
    return out.hidden_states if pooling == Pooling.FIRST_LAST_AVG else (out.last_hidden_state,)


def accepts_token_types(model: Any) -> bool:
    """Whether a transformers model's forward takes token_type_ids."""
    return "token_type_ids" in inspect.signature(model.forward).parameters


def _masked_mean(hidden: torch.Tensor, mask: torch.Tensor, weights: torch.Tensor | None = None) -> torch.Tensor:
    """Mean over the non-padding tokens only; with `weights` (one per token), their weighted sum over the count."""
    m = mask.unsqueeze(-1).to(hidden.dtype)
    w = m if weights is None else m * weights.unsqueeze(-1).to(hidden.dtype)
    return (hidden * w).sum(1) / m.sum(1).clamp(min=1.0)


def pool(
    pooling: str, hidden_states: Sequence[torch.Tensor], mask: torch.Tensor, weights: torch.Tensor | None = None
) -> torch.Tensor:
    """Turn a model's hidden states into one vector per text; `weights` per token (SIF) for the averaging poolings."""
    pooling = pooling_named(pooling)
    if weights is not None:
        if not pooling.averages_tokens:
            raise ValueError(f"token weights apply to the {' and '.join(TOKEN_AVERAGES)} poolings, not '{pooling}'")
        return _masked_mean(hidden_states[-1 if pooling == Pooling.MEAN else 0], mask, weights)
    if pooling == Pooling.MEAN:
        return _masked_mean(hidden_states[-1], mask)
    if pooling == Pooling.CLS:
        return hidden_states[-1][:, 0]
    if pooling == Pooling.FIRST_LAST_AVG:
        return (_masked_mean(hidden_states[1], mask) + _masked_mean(hidden_states[-1], mask)) / 2
    if pooling == Pooling.EMBEDDING_AVG:
        return _masked_mean(hidden_states[0], mask)
    return _sentence_transformers_pool(pooling, hidden_states[-1], mask)


def _sentence_transformers_pool(pooling: Pooling, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """sentence-transformers' max, mean over the square root of the length, position-weighted mean and last token,
    as its Pooling module computes them on right-padded batches."""
    m = mask.unsqueeze(-1).to(hidden.dtype)
    if pooling == Pooling.MAX:
        return hidden.masked_fill(m == 0, float("-inf")).max(dim=1).values
    if pooling == Pooling.MEAN_SQRT_LEN:
        return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9).sqrt()
    if pooling == Pooling.WEIGHTED_MEAN:
        w = m * (mask.cumsum(1).unsqueeze(-1).to(hidden.dtype))  # the i-th real token weighs i
        return (hidden * w).sum(1) / w.sum(1).clamp(min=1e-9)
    last = (mask.sum(1) - 1).clamp(min=0)  # LAST_TOKEN
    return hidden.gather(1, last.view(-1, 1, 1).expand(-1, 1, hidden.shape[-1])).squeeze(1)
