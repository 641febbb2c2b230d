"""BERT without padding in its dense layers: the batch's real tokens are packed into one (tokens, dim) matrix.

On a CPU a forward pass costs about what its dense layers cost, and those scale with every position they
are given, padding included. A batch of requests from many clients mixes lengths, so padding it to its
longest text can triple the work. Here every Linear, LayerNorm and GELU runs on real tokens only; only
the attention scores (a small share for sentence-length texts) see a padded (batch, longest) layout.
The modules and weights are the Hugging Face model's own, so the output matches its padded forward.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F


def supports(model: Any) -> bool:
    """BERT-architecture encoders with absolute positions (BERT, MiniLM, many sentence encoders)."""
    config = model.config
    return bool(
        config.model_type == "bert"
        and getattr(config, "position_embedding_type", "absolute") == "absolute"
        and hasattr(model, "embeddings")
        and hasattr(model, "encoder")
    )


class PackedBert:
    """Runs a transformers BertModel on packed tokens; returns padded hidden states like the model would."""

    def __init__(self, model: Any):
        if not supports(model):
            raise ValueError(f"packed execution needs a BERT encoder, not {model.config.model_type!r}")
        self.model = model
        self.heads = model.config.num_attention_heads
        self.dim = model.config.hidden_size
        # One matrix product for Q, K and V instead of three.
        self._qkv = [
            (
                torch.cat([a.query.weight, a.key.weight, a.value.weight]).detach(),
                torch.cat([a.query.bias, a.key.bias, a.value.bias]).detach(),
            )
            for a in (layer.attention.self for layer in model.encoder.layer)
        ]

    @torch.inference_mode()
    def __call__(
        self, input_ids: list[list[int]], token_type_ids: list[list[int]] | None, all_layers: bool
    ) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """Hidden states (embeddings, then each layer if `all_layers`, else only the last) and the mask."""
        lengths = torch.tensor([len(row) for row in input_ids])
        batch, longest = len(input_ids), int(lengths.max())
        ids = torch.tensor([t for row in input_ids for t in row])
        positions = torch.cat([torch.arange(n) for n in lengths.tolist()])
        types = torch.tensor([t for row in token_type_ids for t in row]) if token_type_ids else torch.zeros_like(ids)
        # Where each packed token sits in the padded (batch * longest) layout.
        rows = torch.repeat_interleave(torch.arange(batch), lengths)
        slots = rows * longest + positions
        mask = torch.arange(longest)[None, :] < lengths[:, None]  # (batch, longest), True on real tokens

        emb = self.model.embeddings
        h = emb.word_embeddings(ids) + emb.position_embeddings(positions) + emb.token_type_embeddings(types)
        h = emb.LayerNorm(h)
        states = [h]
        attn_mask = mask[:, None, None, :]
        head_dim = self.dim // self.heads
        for layer, (w_qkv, b_qkv) in zip(self.model.encoder.layer, self._qkv, strict=True):
            qkv = F.linear(h, w_qkv, b_qkv)
            padded = qkv.new_zeros(batch * longest, 3 * self.dim)
            padded[slots] = qkv
            q, k, v = padded.view(batch, longest, 3, self.heads, head_dim).permute(2, 0, 3, 1, 4)
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
            context = context.transpose(1, 2).reshape(batch * longest, self.dim)[slots]
            attention = layer.attention.output
            h = attention.LayerNorm(attention.dense(context) + h)
            inner = layer.intermediate.intermediate_act_fn(layer.intermediate.dense(h))
            h = layer.output.LayerNorm(layer.output.dense(inner) + h)
            if all_layers:
                states.append(h)
        if not all_layers:
            states.append(h)
        return tuple(self._unpack(s, slots, batch, longest) for s in states), mask.long()

    def _unpack(self, packed: torch.Tensor, slots: torch.Tensor, batch: int, longest: int) -> torch.Tensor:
        out = packed.new_zeros(batch * longest, packed.shape[1])
        out[slots] = packed
        return out.view(batch, longest, -1)
