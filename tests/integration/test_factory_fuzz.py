"""Index factory strings from a fuzzer against a real server, through creation and import: every refusal is a 422
that says why, every acceptance serves documents, and the process is alive after each (FAISS aborted it once)."""

from __future__ import annotations

import json
import os
import random
import re

import httpx

from app.index.factory_grammar import every_form
from tests.conftest import free_port, server_env, server_log, start_server, stop_server

STRINGS = int(os.environ.get("CE_FACTORY_FUZZ", "2000"))  # `make fuzz-factories` runs more
TOKENS = [
    "IVF",
    "HNSW",
    "PQ",
    "SQ",
    "Flat",
    "IDMap",
    "IDMap2",
    "OPQ",
    "RFlat",
    "Refine",
    "LSH",
    "NSG",
    "PCA",
    "RR",
    "fs",
    "x4",
    "x8",
    "fp16",
    "_",
    ",",
    "(",
    ")",
    "0",
    "1",
    "4",
    "7",
    "16",
    "32",
    "4096",
    "65536",
    "99999999",
    " ",
]
NUMBERS = [0, 1, 2, 3, 4, 5, 8, 16, 32, 63, 64, 128, 129, 65536, 65537, 10**9]
DOCS = [{"id": f"d{i}", "text": f"document {i} about topic {i % 7}"} for i in range(40)]


def fuzzed(rng: random.Random, valid: list[str]) -> str:
    """A factory string: random tokens, or a valid form mutated (a digit changed, a character dropped, inserted or
    doubled, two forms spliced)."""
    if rng.random() < 0.3:
        return "".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 5)))
    s = rng.choice(valid)
    if rng.random() < 0.3:  # each number moved to or past a bound
        return re.sub(r"[0-9]+", lambda _: str(rng.choice(NUMBERS)), s)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(s) + 1)
        how = rng.randrange(5)
        if how == 0:
            s = s[:i] + str(rng.choice([0, 1, 2, 3, 5, 9, 129, 65537])) + s[i + 1 :]
        elif how == 1:
            s = s[:i] + s[i + 1 :]
        elif how == 2:
            s = s[:i] + rng.choice(TOKENS) + s[i:]
        elif how == 3:
            s = s[:i] + s[i:][:2] + s[i:]
        else:
            s = s[:i] + "," + rng.choice(valid)
    return s


def test_fuzzed_factory_strings_never_take_the_server_down(tmp_path):
    port = free_port()
    proc = start_server(server_env(tmp_path, port, CE_BACKBONE="hashing"), f"http://127.0.0.1:{port}")
    rng = random.Random(int(os.environ.get("CE_FUZZ_SEED", "51")))
    valid = ["auto", *every_form(64)]
    strings = ["HNSW0", "HNSW1", *(fuzzed(rng, valid) for _ in range(STRINGS - 2))]
    accepted = refused = 0
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            for i, factory in enumerate(strings):
                name = f"f{i}"
                if i % 2:  # an import that creates the collection carries the factory in its collection line
                    line = {
                        "kind": "collection",
                        "format": 1,
                        "name": name,
                        "index_factory": factory,
                        "backbone": "hashing",
                        "pooling": "mean",
                        "fingerprint": "elsewhere",
                        "dim": 64,
                    }
                    r = http.post(
                        f"/collections/{name}/import",
                        content=json.dumps(line),
                        headers={"content-type": "application/x-ndjson"},
                    )
                else:
                    r = http.post("/collections", json={"name": name, "index_factory": factory})
                assert proc.poll() is None, f"the server died on {factory!r}: {server_log(proc)[-3000:]}"
                if r.status_code == 422:
                    refused += 1
                    assert "index_factory" in r.json()["error"]["message"], (factory, r.text)
                    assert http.get(f"/collections/{name}").status_code == 404, factory  # nothing left behind
                    continue
                assert r.status_code in (200, 201), (factory, r.text)
                accepted += 1
                assert http.post(f"/collections/{name}/documents", json={"documents": DOCS}).status_code == 201
                hits = http.get(f"/collections/{name}/search", params={"q": "topic 3", "k": 5}).json()["results"]
                assert len(hits) == 5, (factory, hits)
                assert http.delete(f"/collections/{name}").status_code == 204
                assert proc.poll() is None, f"the server died serving {factory!r}: {server_log(proc)[-3000:]}"
            assert http.get("/health").status_code == 200
    finally:
        stop_server(proc)
    print(f"{len(strings)} factory strings: {accepted} accepted and served, {refused} refused (422)")
    assert (
        accepted >= len(strings) // 20 and refused >= len(strings) // 2
    )  # the fuzzer reached both sides of the grammar
