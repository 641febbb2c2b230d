"""`auto` on synthetic problems whose best correction is known."""

import numpy as np

from app.correction import CovarianceStats, fit_correction
from app.correction.methods import Spectrum
from app.correction.selection import MIN_GAIN, default_choice, score_candidates, select
from app.offline.evaluation import spearman_x100

D, SIGNAL = 24, 8


def _problem(nuisance_scale: float, n_pairs=3000, seed=0, with_stats=False):
    """Meaning lives in 8 dims; a large shared offset and a few loud nuisance dims drown it in raw cosine."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((D, D)))[0]
    scales = np.r_[np.full(4, nuisance_scale), np.ones(SIGNAL), np.full(D - 4 - SIGNAL, 0.05)]
    offset = rng.standard_normal(D) * 4.0

    def embed(latent):
        full = rng.standard_normal((len(latent), D)) * scales
        full[:, 4 : 4 + SIGNAL] = latent
        return full @ basis.T + offset

    z = rng.standard_normal((n_pairs, SIGNAL))
    noise = rng.uniform(0.0, 2.0, n_pairs)
    z2 = z + rng.standard_normal((n_pairs, SIGNAL)) * noise[:, None]
    gold = -noise  # the closer the meanings, the higher the score
    corpus = embed(rng.standard_normal((6000, SIGNAL)))
    stats = CovarianceStats(D).update(corpus)
    return (stats if with_stats else Spectrum.of(stats)), embed(z), embed(z2), gold


def test_auto_removes_the_loud_nuisance_directions():
    spectrum, left, right, gold = _problem(nuisance_scale=6.0)
    candidates = score_candidates(spectrum, left, right, gold)
    selection = select(candidates, gold)
    chosen = selection.chosen
    assert chosen.method != "none"
    # Known best: remove exactly the 4 nuisance directions; centring alone, or removing 2 or 8, is far worse.
    by_name = {(c.method, str(c.params)): c.score for c in candidates}
    assert chosen.params["drop"] == 4
    assert (
        by_name[("abtt", "{'drop': 4}")] > max(by_name[("abtt", "{'drop': 2}")], by_name[("abtt", "{'drop': 8}")]) + 10
    )
    assert chosen.score >= by_name[("center", "{}")] + 10
    assert chosen.score >= max(c.score for c in candidates) - 0.1
    assert selection.gain_lower_bound >= MIN_GAIN
    record = selection.record()
    assert record["score"] > record["raw_score"] and record["candidates"] == len(candidates)


def test_auto_keeps_none_when_nothing_clearly_helps():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4000, D))  # already isotropic and centred: no correction can add anything
    spectrum = Spectrum.of(CovarianceStats(D).update(x))
    left = rng.standard_normal((400, D))
    right = left + rng.standard_normal((400, D)) * rng.uniform(0.1, 2.0, (400, 1))
    gold = -np.linalg.norm(right - left, axis=1)
    selection = select(score_candidates(spectrum, left, right, gold), gold)
    assert selection.chosen.method == "none"


def test_scores_match_applying_each_candidate():
    stats, left, right, gold = _problem(nuisance_scale=3.0, n_pairs=500, with_stats=True)
    candidates = score_candidates(Spectrum.of(stats), left, right, gold)
    for c in candidates[::23]:
        mu, w = fit_correction(stats, c.method, **c.params)
        assert abs(c.score - spearman_x100((left - mu) @ w, (right - mu) @ w, gold)) < 1e-6, c
        assert w.shape[1] == c.dim or c.method in ("center", "abtt", "none")


def test_default_choice_fits_small_backbones():
    assert default_choice(384) == ("whitening", {"alpha": 0.15, "eps": 0.1, "drop": 0, "dim": 256})
    assert default_choice(64)[1]["dim"] == 64
