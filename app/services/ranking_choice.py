"""Which ranking a search uses: the request's, the judgments' tuned over HTTP, the settings', the correction's, or
the documented rule, in that order; one place, so /search, /info and the commands agree."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.core.config import Settings
from app.core.errors import InvalidInput
from app.correction.pipeline import Correction
from app.index.fusion import LIKE_FEEDBACK, LIKE_RULE, Ranking

RANKING = "ranking"  # where an artifact's `extra.search` keeps the ranking its judgments chose


def ranking_for(
    settings: Settings,
    correction: Correction | None,
    published: dict[str, Any] | None = None,
    *,
    like: bool = False,
    **asked: Any,
) -> Ranking:
    """What the query asks (search_query.RANKING_FIELDS), else the ranking tuned on the collection's judgments over
    HTTP (`published`), else the settings' (a collection's, else CE_SEARCH), else what the correction's judgments
    chose, else the documented rule. A fusion named without a weight takes its own default weight. A search `like` a
    document feeds back (fusion.LIKE_FEEDBACK) unless the request or the settings name feedback."""
    tuned = correction.artifact.extra.get("search", {}).get(RANKING) if correction else None
    ranking = Ranking.from_record(tuned) if tuned else Ranking()
    search = settings.search
    configured = {
        "mode": search.search_mode,
        "fusion": search.fusion,
        "lexical_weight": search.lexical_weight,
        "feedback_docs": search.feedback_docs,
        "feedback_weight": search.feedback_weight,
    }
    if published is not None:
        ranking = Ranking.from_record(published)
    for chosen_by, overrides in (("settings", configured if published is None else {}), ("request", asked)):
        overrides = {key: value for key, value in overrides.items() if value is not None}
        if not overrides:
            continue
        fusion = overrides.get("fusion", ranking.fusion)
        weight = ranking.lexical_weight if fusion == ranking.fusion else None  # None: that fusion's own default
        try:
            ranking = replace(
                ranking,
                **{**overrides, "lexical_weight": overrides.get("lexical_weight", weight), "chosen_by": chosen_by},
            )
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
    named = asked.get("feedback_docs") is not None or (published is None and search.feedback_docs is not None)
    if like and not named and not ranking.feedback_docs:
        docs, weight = LIKE_FEEDBACK
        ranking = replace(
            ranking, feedback_docs=docs, feedback_weight=weight, chosen_by=f"{ranking.chosen_by}; {LIKE_RULE}"
        )
    return ranking
