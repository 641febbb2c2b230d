"""The search space chosen on judgments: the family scored, a choice kept only if every judged set allows it."""

from dataclasses import replace

import numpy as np
import pytest

from app.correction import CovarianceStats
from app.correction.methods import Spectrum
from app.correction.selection import score_candidates
from app.offline.retrieval import JudgedCorpus, Judgments, exact_top
from app.offline.search_tuning import (
    RECALL_TOLERANCE,
    JudgedSet,
    SearchCandidate,
    score_search_candidates,
    select_search,
)

QUERIES = 400


def candidate(method: str, ndcg: list[float], recall: list[float], *, seed: int = 0) -> SearchCandidate:
    """Per-query metrics around the given means on two judged sets of QUERIES / 2 queries each."""
    rng = np.random.default_rng(seed)
    half = QUERIES // 2
    noise = [rng.normal(0, 0.05, half) for _ in range(2)]
    return SearchCandidate(
        method, {}, 8, [n + e for n, e in zip(ndcg, noise, strict=True)], [np.full(half, r) for r in recall]
    )


def test_a_candidate_that_gains_ndcg_but_loses_recall_is_not_chosen():
    raw = candidate("none", [0.40, 0.50], [0.70, 0.80])
    loses_recall = replace(candidate("whitening", [0.45, 0.55], [0.70, 0.80 - 2 * RECALL_TOLERANCE]))
    assert select_search([raw, loses_recall]).chosen is raw
    keeps_recall = candidate("center", [0.42, 0.52], [0.70, 0.80 - RECALL_TOLERANCE / 2])
    selection = select_search([raw, loses_recall, keeps_recall])
    assert selection.chosen is keeps_recall and selection.lower_bound > 0.01
    assert selection.record()["chosen"]["ndcg_at_10"] == [pytest.approx(42.0, abs=1), pytest.approx(52.0, abs=1)]


def test_a_candidate_that_loses_ndcg_on_one_set_or_gains_within_noise_is_not_chosen():
    raw = candidate("none", [0.40, 0.50], [0.70, 0.80])
    one_set_worse = candidate("whitening", [0.48, 0.49], [0.75, 0.85])
    assert select_search([raw, one_set_worse]).chosen is raw
    rng = np.random.default_rng(1)
    jitter = [e - e.mean() + 0.0001 for e in rng.normal(0, 0.05, (2, QUERIES // 2))]  # +0.01 points on each set
    noisy = SearchCandidate("center", {}, 8, [n + e for n, e in zip(raw.ndcg, jitter, strict=True)], raw.recall)
    selection = select_search([raw, noisy])
    assert selection.chosen is raw and selection.lower_bound < 0


def test_search_candidates_are_the_family_auto_searches_scored_on_judgments():
    rng = np.random.default_rng(0)
    offset = np.full(6, 3.0)
    docs = rng.standard_normal((40, 6)) + offset
    queries = docs[:10] + 0.3 * rng.standard_normal((10, 6))  # query i is about document i
    collection = JudgedCorpus(
        [f"d{i}" for i in range(40)],
        [""] * 40,
        [f"q{i}" for i in range(10)],
        [""] * 10,
        {f"q{i}": {f"d{i}": 1} for i in range(10)},
    )
    judged = JudgedSet("toy", collection, docs, queries, Judgments.of(collection))
    spectrum = Spectrum.of(CovarianceStats(6).update(docs))
    scored = score_search_candidates(spectrum, [judged])
    pairs = score_candidates(spectrum, queries, docs[:10], np.arange(10.0))
    assert [(c.method, c.params) for c in scored] == [(c.method, c.params) for c in pairs]
    raw = judged.judgments.per_query(exact_top(queries, docs))
    np.testing.assert_array_equal(scored[0].ndcg[0], raw["ndcg_at_10"])
    centred = next(c for c in scored if c.method == "center")
    expected = judged.judgments.per_query(exact_top(queries - spectrum.mean, docs - spectrum.mean))
    np.testing.assert_allclose(centred.ndcg[0], expected["ndcg_at_10"])
    assert centred.pooled_ndcg.mean() > scored[0].pooled_ndcg.mean()  # the offset hid the differences
