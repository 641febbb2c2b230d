"""Which ranking a search uses: request, then judgments tuned over HTTP, then settings, then the correction's, then
the documented rule."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.config import Settings
from app.core.errors import InvalidInput
from app.core.search_settings import SearchSettings
from app.correction.pipeline import Correction
from app.index.fusion import DEFAULT_FUSION, DEFAULT_RULE, DEFAULT_WEIGHT, DEFAULT_WEIGHTS, LIKE_FEEDBACK, LIKE_RULE
from app.services.ranking_choice import RANKING, ranking_for


def settings(**search: object) -> Settings:
    return Settings(search=SearchSettings(**search))


@pytest.fixture
def tuned(artifact_factory, vectors) -> Correction:
    """A correction whose judgments chose rrf at 0.25, dense feedback off."""
    artifact = artifact_factory(vectors)
    ranking = {"mode": "hybrid", "fusion": "rrf", "lexical_weight": 0.25, "chosen_by": "judgments"}
    return Correction(replace(artifact, extra={"search": {RANKING: ranking}}))


def test_without_anything_said_the_documented_rule_ranks():
    ranking = ranking_for(settings(), None)
    assert (ranking.fusion, ranking.lexical_weight, ranking.chosen_by) == (DEFAULT_FUSION, DEFAULT_WEIGHT, DEFAULT_RULE)


def test_the_correction_s_judgments_rank_where_nothing_else_is_said(tuned):
    ranking = ranking_for(settings(), tuned)
    assert (ranking.fusion, ranking.lexical_weight, ranking.chosen_by) == ("rrf", 0.25, "judgments")


def test_settings_override_the_correction_and_a_request_overrides_both(tuned):
    configured = settings(fusion="convex", lexical_weight=0.3)
    assert (ranking_for(configured, tuned).fusion, ranking_for(configured, tuned).chosen_by) == ("convex", "settings")
    asked = ranking_for(configured, tuned, mode="dense")
    assert (asked.mode, asked.fusion, asked.lexical_weight, asked.chosen_by) == ("dense", "convex", 0.3, "request")


def test_a_published_ranking_replaces_the_settings(tuned):
    published = {"mode": "hybrid", "fusion": "calibrated", "lexical_weight": 0.55, "chosen_by": "judgments over HTTP"}
    ranking = ranking_for(settings(fusion="convex"), tuned, published)
    assert (ranking.fusion, ranking.lexical_weight, ranking.chosen_by) == ("calibrated", 0.55, "judgments over HTTP")


def test_a_fusion_named_without_a_weight_takes_its_own_default_weight(tuned):
    ranking = ranking_for(settings(), tuned, fusion="convex")
    assert (ranking.fusion, ranking.lexical_weight) == ("convex", DEFAULT_WEIGHTS["convex"])


def test_a_ranking_the_fusion_refuses_is_a_4xx():
    with pytest.raises(InvalidInput):
        ranking_for(settings(), None, lexical_weight=2.0)


def test_a_search_like_a_document_feeds_back_unless_the_request_or_the_settings_name_feedback(tuned):
    like = ranking_for(settings(), tuned, like=True)
    assert (like.feedback_docs, like.feedback_weight) == LIKE_FEEDBACK and like.chosen_by == f"judgments; {LIKE_RULE}"
    assert ranking_for(settings(), tuned).feedback_docs == 0  # a text query: off
    assert ranking_for(settings(), None, like=True, feedback_docs=0).feedback_docs == 0  # the request's
    assert ranking_for(settings(feedback_docs=0), None, like=True).feedback_docs == 0  # the settings'
    chosen = ranking_for(settings(), None, like=True, feedback_docs=5, feedback_weight=0.5)
    assert (chosen.feedback_docs, chosen.feedback_weight, chosen.chosen_by) == (5, 0.5, "request")
