"""The tune on judgments sent over HTTP: feedback is taken when it helps on the tuning queries without losing on
any, refused when it hurts; the held-out queries decide whether the choice replaces the default."""

from __future__ import annotations

import pytest

from app.index.fusion import Candidates, Ranking
from app.offline.judged_ranking import held_out, split, tune

QUERIES = [f"query {i}" for i in range(30)]
QRELS = {q: {f"r{i}": 1} for i, q in enumerate(QUERIES)}
OTHERS = [f"x{j}" for j in range(40)]


def ranked(target: str, at: int) -> list[tuple[str, float]]:
    order = OTHERS[:at] + [target] + OTHERS[at:]
    return [(d, 1.0 - j / 100) for j, d in enumerate(order)]


def search_where_feedback(effect: str):
    """Both lists put each query's document 5th; searched again with feedback, the dense list puts it first
    (`helps`) or 30th (`hurts`)."""

    def search(query: str, ranking: Ranking) -> Candidates:
        target = next(iter(QRELS[query]))
        dense = ranked(target, 4)
        if ranking.feedback:
            dense = ranked(target, 0 if effect == "helps" else 29)
        return Candidates(dense, ranked(target, 4)[:20], 1.0, {d: 0.5 for d, _ in ranked(target, 4)[:20]})

    return search


def test_feedback_that_helps_is_chosen_and_published():
    record = tune(search_where_feedback("helps"), QRELS, Ranking())
    assert record["ranking"]["feedback_docs"] == 3 and record["published"]
    assert record["held_out"]["chosen"]["ndcg_at_10"] > record["held_out"]["default"]["ndcg_at_10"]
    assert record["selection"]["feedback"]["chosen"]["docs"] == 3


def test_feedback_that_hurts_is_refused():
    record = tune(search_where_feedback("hurts"), QRELS, Ranking())
    assert record["ranking"]["feedback_docs"] == 0 and record["selection"]["feedback"]["chosen"] is None
    assert all(v < record["selection"]["feedback"]["without"] for v in record["selection"]["feedback"]["with"].values())


def test_the_split_is_fixed_by_query_and_needs_six_queries():
    tuning, deciding = split(QRELS)
    assert set(tuning) | set(deciding) == set(QRELS) and not set(tuning) & set(deciding)
    assert deciding == [q for q in QUERIES if held_out(q)] and len(deciding) >= 2
    with pytest.raises(ValueError, match="needs 6"):
        split({q: QRELS[q] for q in QUERIES[:5]})
