"""When two rankings are the same: equal scores, and the same documents above the last score (which k may cut
anywhere among equal scores, and each engine orders its own way)."""

from __future__ import annotations

import math


def same_ranking(found: list[tuple[str, float]], expected: list[tuple[str, float]], rel: float = 1e-4) -> bool:
    if len(found) != len(expected):
        return False
    if not all(math.isclose(a, b, rel_tol=rel, abs_tol=1e-6) for (_, a), (_, b) in zip(found, expected, strict=True)):
        return False
    last = expected[-1][1] if expected else 0.0
    margin = rel * max(abs(last), 1e-6)
    return {d for d, s in found if s > last + margin} == {d for d, s in expected if s > last + margin}
