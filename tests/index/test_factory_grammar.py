"""The grammar of index structures: every form it accepts builds, trains, fills, searches and deletes without taking
the process down (proven in a child process, which a FAISS abort would kill), and what it refuses says why."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.index.factory_grammar import HNSW_LINKS, IVF_LISTS, PATTERN, every_form, parse_factory

# Builds each form with the service's own index class on vectors enough to train it, then upserts, searches with
# and without a filter, removes, and searches again; prints one line per form, so a crash names the form it died on.
PROOF = """
import sys
import numpy as np
from app.index.faiss_index import VectorIndex
from app.index.factories import new_faiss_index, training_minimum
from app.index.factory_grammar import every_form, IVF_LISTS

dim = int(sys.argv[1])
rng = np.random.default_rng(0)
for form in every_form(dim):
    n = max(300, training_minimum(dim, form) + 10)
    x = rng.standard_normal((n, dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    ids = [str(i) for i in range(n)]
    index = VectorIndex.build(dim, ids, x, factory=form)
    assert index.factory == form, (form, index.factory)
    index.upsert(ids[:5], x[5:10])
    top = index.search(x[:2], 5)
    assert len(top[0]) == 5, form
    assert index.search(x[:1], 3, allowed={"7", "8"})[0], form
    index.remove(ids[:20])
    assert "3" not in {d for d, _ in index.search(x[3:4], 10)[0]}, form
    print(form, flush=True)
print("biggest", new_faiss_index(dim, f"IVF{IVF_LISTS[1]},Flat").nlist, flush=True)
"""


@pytest.mark.process
@pytest.mark.parametrize("dim", [64, 384])  # the weight-free backbone's and all-MiniLM's
def test_every_accepted_form_builds_fills_searches_and_deletes_in_a_child_process(dim):
    done = subprocess.run([sys.executable, "-c", PROOF, str(dim)], capture_output=True, text=True, timeout=600)
    built = done.stdout.splitlines()
    assert done.returncode == 0, f"died after {built[-1:]} ({done.returncode}): {done.stderr[-2000:]}"
    assert built == [*every_form(dim), f"biggest {IVF_LISTS[1]}"]


@pytest.mark.parametrize(
    ("factory", "reason"),
    [
        ("HNSW0", "HNSW's M 0 is out of bounds: 4 to 128"),
        ("HNSW1", "HNSW's M 1 is out of bounds: 4 to 128"),
        ("HNSW129", "HNSW's M 129 is out of bounds"),
        ("IVF0,Flat", "IVF's lists 0 is out of bounds: 1 to 65,536"),
        ("IVF65537,Flat", "IVF's lists 65537 is out of bounds"),
        ("IVF16,PQ0", "PQ's sub-quantizers 0 is out of bounds"),
        ("IDMap,Flat", "is not one of the index structures served here"),
        ("IVF16,PQ8x8fs", "is not one of the index structures served here"),
        ("HNSW32,PQ8", "is not one of the index structures served here"),
        ("Flat ", "is not one of the index structures served here"),
        ("", "is not one of the index structures served here"),
    ],
)
def test_strings_outside_the_grammar_are_refused_with_the_reason(factory, reason):
    with pytest.raises(ValueError, match=reason.replace("(", r"\(")):
        parse_factory(factory)


def test_a_product_quantizer_must_divide_the_dimension():
    parse_factory("IVF4,PQ48x4fs").check_dim(384)
    with pytest.raises(ValueError, match="PQ7: a product quantizer's sub-quantizers must divide the dimension 384"):
        parse_factory("IVF4,PQ7").check_dim(384)
    with pytest.raises(ValueError, match="must divide the dimension 64"):
        parse_factory("IVF4,PQ128").check_dim(64)


def test_the_bounds_are_where_the_forms_are_built():
    assert {f"HNSW{HNSW_LINKS[0]}", f"HNSW{HNSW_LINKS[1]}"} <= set(every_form(8))
    assert parse_factory("auto").text == "auto"


def test_the_published_pattern_matches_every_form_and_auto():
    import re

    assert all(re.fullmatch(PATTERN, f) for f in ["auto", *every_form(384)])
    assert not re.fullmatch(PATTERN, "IDMap,Flat")
