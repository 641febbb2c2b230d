"""The enumerations every layer shares: their values as settings and the API spell them, and SIF's poolings."""

from __future__ import annotations

from app.core.names import ALSO_METHODS, LINEAR_METHODS, Fusion, Method, Pooling, SearchMode


def test_values_are_the_spellings_users_type():
    assert [p.value for p in Pooling] == [
        "mean",
        "cls",
        "first_last_avg",
        "embedding_avg",
        "max",
        "mean_sqrt_len",
        "weighted_mean",
        "last_token",
    ]
    assert [m.value for m in SearchMode] == ["dense", "lexical", "hybrid"]
    assert [f.value for f in Fusion] == ["calibrated", "convex", "rrf"]
    assert Pooling("cls") is Pooling.CLS and f"{Method.WHITENING}" == "whitening"


def test_only_plain_token_averages_take_sifs_weights_and_auto_weighs_linear_methods():
    assert [p for p in Pooling if p.averages_tokens] == [Pooling.MEAN, Pooling.EMBEDDING_AVG]
    assert Method.AUTO not in LINEAR_METHODS + ALSO_METHODS
    assert set(LINEAR_METHODS) | set(ALSO_METHODS) | {Method.AUTO} == set(Method)
