"""The index structures a client may ask for, as a grammar the service owns: FAISS parses any factory string and
aborts the whole process on some it accepts (`HNSW0` fails an assertion when vectors are added, `HNSW1` segfaults
at creation), so no string reaches FAISS before it is one of these forms, each parameter within its bounds.

Every form, at its bounds, is built, trained, filled and searched in a child process by
`tests/index/test_factory_grammar.py`; a form added here is covered there by the same enumeration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HNSW_LINKS = (4, 128)  # M: below 4 the graph degenerates (FAISS crashes at 0 and 1), above 128 it only costs memory
IVF_LISTS = (1, 65_536)  # each list needs ~39 training vectors: 65,536 lists train on 2.6M, hours on two cores
SCALAR = ("SQ4", "SQ8", "SQfp16")
HNSW_STORAGE = ("Flat", "SQ8")
PQ_BITS = ("x4fs", "x4", "x8", "")  # 4-bit codes scanned with SIMD tables (fs), 4-bit, 8-bit (the default)
FORMS = "auto, Flat, SQ4|SQ8|SQfp16, HNSW<M>[,Flat|,SQ8], IVF<lists>,Flat|SQ4|SQ8|SQfp16|PQ<m>[x4fs|x4|x8]"

_SHAPE = re.compile(
    r"(?P<flat>Flat)|(?P<scalar>SQ4|SQ8|SQfp16)"
    r"|HNSW(?P<links>[0-9]{1,6})(?:,(?P<storage>Flat|SQ8))?"
    r"|IVF(?P<lists>[0-9]{1,9}),(?:(?P<coarse>Flat|SQ4|SQ8|SQfp16)|PQ(?P<pq>[0-9]{1,6})(?P<bits>x4fs|x4|x8)?)"
)
# What the schema publishes: the forms' shapes (the bounds and a product quantizer's fit to the dimension are the
# service's own check, which says which one a string broke).
PATTERN = rf"^(auto|{_SHAPE.pattern})$"


@dataclass(frozen=True)
class FactoryForm:
    """A parsed factory string: which structure, and the numbers it was given."""

    text: str
    links: int | None = None  # HNSW's M
    lists: int | None = None  # IVF's nlist
    subquantizers: int | None = None  # PQ's m

    def check_dim(self, dim: int) -> None:
        """ValueError when the structure cannot hold vectors of `dim` (a product quantizer's m must divide it)."""
        m = self.subquantizers
        if m is not None and (m > dim or dim % m):
            divisors = [d for d in (1, 2, 4, 8, 16, 32, 64) if dim % d == 0]
            raise ValueError(
                f"PQ{m}: a product quantizer's sub-quantizers must divide the dimension {dim} (e.g. "
                f"{', '.join(map(str, divisors))})"
            )


def _within(name: str, value: int, bounds: tuple[int, int]) -> int:
    low, high = bounds
    if not low <= value <= high:
        raise ValueError(f"{name} {value} is out of bounds: {low} to {high:,}")
    return value


def parse_factory(factory: str) -> FactoryForm:
    """The form of `factory`, or ValueError naming what is wrong with it ('auto' is a form: sized by the service)."""
    if factory == "auto":
        return FactoryForm(factory)
    shape = _SHAPE.fullmatch(factory)
    if shape is None:
        raise ValueError(f"{factory[:80]!r} is not one of the index structures served here: {FORMS}")
    links, lists, pq = shape["links"], shape["lists"], shape["pq"]
    return FactoryForm(
        factory,
        links=_within("HNSW's M", int(links), HNSW_LINKS) if links else None,
        lists=_within("IVF's lists", int(lists), IVF_LISTS) if lists else None,
        subquantizers=_within("PQ's sub-quantizers", int(pq), (1, 65_536)) if pq else None,
    )


def every_form(dim: int, lists: tuple[int, ...] = (1, 16)) -> list[str]:
    """Each form of the grammar at its bounds for `dim` (a product quantizer of 1, dim/4 and dim sub-quantizers, each
    code size): what the test builds."""
    links = (HNSW_LINKS[0], 16, HNSW_LINKS[1])
    pqs = [f"PQ{m}{bits}" for m in sorted({1, max(dim // 4, 1), dim}) for bits in PQ_BITS]
    return [
        "Flat",
        *SCALAR,
        *(f"HNSW{m}" for m in links),
        *(f"HNSW{m},{s}" for m in links for s in HNSW_STORAGE),
        *(f"IVF{n},{c}" for n in lists for c in ("Flat", *SCALAR, *pqs)),
    ]
