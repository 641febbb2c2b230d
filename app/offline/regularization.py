"""Gao et al. (ICLR 2019), "Representation Degeneration Problem in Training Natural Language Generation Models":
word embeddings crowd into a narrow cone during training; a penalty on the mean cosine between the rows of the
input embedding matrix, added to the loss, keeps them apart. Here it is a third training-time fix beside SimCSE
and ConSERT, alone or with either."""

from __future__ import annotations

from typing import Any

import torch

REGULARIZERS = ("none", "embedding")


def embedding_cosine(model: Any) -> torch.Tensor:
    """The mean cosine over every pair of rows of the word-embedding matrix (each row with itself included), the
    penalty itself: the squared norm of the mean unit row, so exact over the whole vocabulary and cheap."""
    unit = torch.nn.functional.normalize(model.embeddings.word_embeddings.weight, dim=1)
    centre = unit.mean(dim=0)
    return centre @ centre


def regularization(model: Any, kind: str, weight: float) -> torch.Tensor | None:
    """What `kind` adds to the loss (None: nothing)."""
    if kind == "none":
        return None
    if kind == "embedding":
        return weight * embedding_cosine(model)
    raise ValueError(f"unknown regularizer {kind}; choose from {', '.join(REGULARIZERS)}")
