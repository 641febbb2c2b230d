"""The names users type for poolings and correction methods: one enumeration each, spelled once."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, get_args


class Pooling(StrEnum):
    """How a backbone turns token vectors into one sentence vector."""

    MEAN = "mean"
    CLS = "cls"
    FIRST_LAST_AVG = "first_last_avg"  # the first and the last layer's token means, averaged
    EMBEDDING_AVG = "embedding_avg"  # the mean of the input word embeddings, before any layer
    # sentence-transformers' other poolings, read from a model folder (or asked for by name)
    MAX = "max"  # each dimension's largest value over the tokens
    MEAN_SQRT_LEN = "mean_sqrt_len"  # the tokens' sum over the square root of their count
    WEIGHTED_MEAN = "weighted_mean"  # a mean weighing the i-th token by i
    LAST_TOKEN = "last_token"  # the last real token's vector

    @property
    def averages_tokens(self) -> bool:
        """Whether it is a plain average of tokens: the only poolings SIF's token weights can reweight."""
        return self in TOKEN_AVERAGES


TOKEN_AVERAGES = (Pooling.MEAN, Pooling.EMBEDDING_AVG)
# The four the bundled corrections are fitted on and the seed studies compare.
STUDIED_POOLINGS = (Pooling.MEAN, Pooling.CLS, Pooling.FIRST_LAST_AVG, Pooling.EMBEDDING_AVG)


class Method(StrEnum):
    """A correction method, as `fit --method` and the artifact name it."""

    NONE = "none"
    CENTER = "center"
    ABTT = "abtt"
    WHITENING = "whitening"
    FLOW = "flow"
    SIF = "sif"
    AUTO = "auto"  # not a map of its own: one of the linear ones, chosen on labelled pairs


LINEAR_METHODS = (Method.NONE, Method.CENTER, Method.ABTT, Method.WHITENING)  # each a single (x - mu) @ W
ALSO_METHODS = (Method.FLOW, Method.SIF)  # what `auto --also` can weigh against its linear choice


class SearchMode(StrEnum):
    """How /search ranks: by the dense index, by the lexical (BM25) one, or both fused."""

    DENSE = "dense"
    LEXICAL = "lexical"
    HYBRID = "hybrid"


class Fusion(StrEnum):
    """How hybrid search fuses its two lists: min-max scaled scores weighed by what each list has to say for the
    query (calibrated), a plain convex combination of them, or reciprocal ranks."""

    CALIBRATED = "calibrated"
    CONVEX = "convex"
    RRF = "rrf"


# Snowball stemmers that tantivy also has a stop-word list for; "none" keeps lower-cased words as they are.
LexicalLanguage = Literal[
    "danish",
    "dutch",
    "english",
    "finnish",
    "french",
    "german",
    "hungarian",
    "italian",
    "norwegian",
    "portuguese",
    "russian",
    "spanish",
    "swedish",
    "none",
]
LEXICAL_LANGUAGES: tuple[str, ...] = get_args(LexicalLanguage)
