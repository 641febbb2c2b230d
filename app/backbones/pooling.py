"""Poolings: the hidden states of a transformer turned into one vector per text."""

from __future__ import annotations

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
    if pooling == Pooling.EMBEDDING_AVG:  # no transformer layer at all
        return (model.embeddings(input_ids=input_ids, inputs_embeds=inputs_embeds, token_type_ids=token_type_ids),)
    out = model(
        input_ids=input_ids,
        inputs_embeds=inputs_embeds,
        attention_mask=mask,
        token_type_ids=token_type_ids,
        output_hidden_states=pooling == Pooling.FIRST_LAST_AVG,
    )
    return out.hidden_states if pooling == Pooling.FIRST_LAST_AVG else (out.last_hidden_state,)


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
    return _masked_mean(hidden_states[0], mask)  # EMBEDDING_AVG
