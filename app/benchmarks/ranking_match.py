"""When two rankings are the same: the same scores to `rel`, and the same documents in each run of tied scores
(scores within `rel` of each other, which either engine may order its own way) but the last, which k may cut
anywhere."""

from __future__ import annotations

import math


def same_ranking(found: list[tuple[str, float]], expected: list[tuple[str, float]], rel: float = 1e-5) -> bool:
    if len(found) != len(expected):
        return False

    def close(a: float, b: float) -> bool:
        return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)

    if not all(close(a, b) for (_, a), (_, b) in zip(found, expected, strict=True)):
        return False
    ties: list[list[int]] = []
    for i, (_, score) in enumerate(expected):
        if ties and close(score, expected[ties[-1][-1]][1]):
            ties[-1].append(i)
        else:
            ties.append([i])
    return all({found[i][0] for i in run} == {expected[i][0] for i in run} for run in ties[:-1])
