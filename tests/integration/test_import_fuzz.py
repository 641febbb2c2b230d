"""Imports fuzzed on every field of a line, against a real server process and its embedded Redis: an export of a
collection of long documents (several passages each), one field of one line set to another JSON value (of any type,
and the passages' own edge cases), sent to the default collection and to a new one. No answer is a 5xx, a refused
import writes nothing, and after each the service restarts on its data folder and searches every collection."""

from __future__ import annotations

import json
import os
import random

import httpx

from app.benchmarks.http import free_port
from tests.conftest import server_env, server_log, start_server, stop_server

CASES = int(os.environ.get("CE_IMPORT_FUZZ", "12"))
NDJSON = {"content-type": "application/x-ndjson"}
VALUES = [
    None,
    True,
    0,
    -1,
    2**64,
    1.5,
    "",
    "x",
    [],
    {},
    [[0, 1]],
    {"a": [1]},
    "\ud800",
    "[[0, 5], [3, 9]]",
    "[[0, 5], [5, 3]]",
    "[[0, 5], [4, 99999]]",
    "[[0, 5]]",
    "[[-1, 5], [4, 9]]",
    "[[0, 5], [4, 9.5]]",
    "[[0, 5], [4]]",
    "[",
    "[[0, 5], [4, 9]]",
    "AAAA",
    "float64",
    "int8",
    "[" * 80 + "]" * 80,
]


def mutated(lines: list[dict], rng: random.Random) -> bytes:
    """The export with one field of one line set to another value (or two lines joined by a comma)."""
    lines = json.loads(json.dumps(lines))
    if rng.random() < 0.1:
        i = rng.randrange(1, len(lines) - 1)
        text = [json.dumps(line) for line in lines]
        text[i : i + 2] = [text[i] + "," + text[i + 1]]
        return "\n".join(text).encode()
    documents = [line for line in lines if line.get("passages")]
    if rng.random() < 0.4:  # spans as many as its vectors, so only the spans themselves are wrong
        line = rng.choice(documents)
        spans = json.loads(line["passages"])
        end = len(line["text"])
        line["passages"] = json.dumps(
            rng.choice(
                [
                    spans[::-1],
                    [[s + end, e + end] for s, e in spans],
                    [[e, s] for s, e in spans],
                    [[-1, e] for _, e in spans],
                    [[s, e + 0.5] for s, e in spans],
                    [[0, end]] * len(spans),
                    [[s, e, 0] for s, e in spans],
                    [{"start": s} for s, _ in spans],
                ]
            )
        )
        return "\n".join(json.dumps(line) for line in lines).encode()
    line = rng.choice(lines)
    field = rng.choice([*line, "unknown"])
    line[field] = rng.choice(VALUES) if rng.random() < 0.8 else rng.choice(VALUES[:12])
    return "\n".join(json.dumps(line) for line in lines).encode()


def test_no_import_is_a_5xx_or_keeps_the_service_from_starting(tmp_path):
    rng = random.Random(int(os.environ.get("CE_FUZZ_SEED", "61")))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = server_env(tmp_path, port, CE_BACKBONE="hashing", CE_MAX_LENGTH="32", CE_PASSAGE_TOKENS="16")
    proc = start_server(env, base)
    client = httpx.Client(base_url=base, timeout=60)
    answers: list[int] = []
    try:
        assert client.post("/collections", json={"name": "src"}).status_code == 201
        docs = [
            {"id": f"d{i}", "text": f"document {i} talks at length about the heron, the river and stone " * 3}
            for i in range(4)
        ]
        assert client.post("/collections/src/documents", json={"documents": docs}).status_code == 201
        lines = [json.loads(line) for line in client.get("/collections/src/export").text.splitlines()]
        assert any(line.get("passages") for line in lines)  # several passages: their spans are fuzzed too
        whole = "\n".join(json.dumps(line) for line in lines).encode()
        taken = client.post("/collections/copy/import", content=whole, headers=NDJSON)  # the export as it is
        assert taken.status_code == 200 and taken.json()["from_vectors"] == len(docs), taken.text
        for case in range(CASES):
            body = mutated(lines, rng)
            for name in ("default", f"t{case}"):
                before = client.post(f"/collections/{name}/documents/count", json={})
                answer = client.post(f"/collections/{name}/import", content=body, headers=NDJSON)
                answers.append(answer.status_code)
                assert answer.status_code < 500, (case, name, answer.text, body[:400])
                if answer.status_code >= 400 and before.status_code == 200:  # refused: nothing written
                    assert client.post(f"/collections/{name}/documents/count", json={}).json() == before.json(), case
            stop_server(proc)
            proc = start_server(env, base)
            names = [c["name"] for c in client.get("/collections").json()["collections"]]
            for name in names:
                found = client.get(f"/collections/{name}/search", params={"q": "heron river"})
                assert found.status_code == 200, (case, name, found.text)
    except BaseException:
        print(server_log(proc)[-4000:])
        raise
    finally:
        client.close()
        stop_server(proc)
    assert 422 in answers  # the fuzz reached the checks
