"""`export` and `import`: a collection to a file of JSON lines and back, through a running server's API."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from tqdm import tqdm

from app.cli.options import fail, guarded

if TYPE_CHECKING:
    import httpx


Url = Annotated[str, typer.Option(help="The server, as a client reaches it.")]
ApiKeyOption = Annotated[str | None, typer.Option(envvar="CE_API_KEY", help="Bearer token (a write key to import).")]
Collection = Annotated[str, typer.Option(help="The collection (`default`: the service's own).")]
# A request's documents: under CE_MAX_TEXTS (encoded when the backbone differs) and the body limit.
BATCH_DOCUMENTS = 200
BATCH_BYTES = 4_000_000


def _client(url: str, api_key: str | None) -> httpx.Client:
    import httpx  # only these commands and `verify --url` talk to a server

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=None)


@guarded
def export_collection(
    out: Annotated[Path, typer.Option(help="The file written (JSON lines).")],
    collection: Collection = "default",
    url: Url = "http://127.0.0.1:8000",
    api_key: ApiKeyOption = None,
) -> None:
    """Write a collection (settings, correction, documents with their raw vectors) to a file."""
    documents = 0
    with _client(url, api_key) as http, http.stream("GET", f"/collections/{collection}/export") as response:
        if response.status_code != 200:
            response.read()
            raise fail(f"{response.status_code}: {response.text}", 2)
        with out.open("wb") as fh, tqdm(desc="export", unit=" docs") as bar:
            for line in response.iter_lines():
                fh.write(line.encode() + b"\n")
                if json.loads(line).get("kind") == "document":
                    documents += 1
                    bar.update()
    typer.echo(json.dumps({"collection": collection, "documents": documents, "file": str(out)}))


def requests_of(path: Path) -> Iterator[tuple[bytes, int]]:
    """The file as import requests: each the collection (and correction) lines, then a batch of documents."""
    head: list[bytes] = []
    batch: list[bytes] = []
    size = 0
    with path.open("rb") as fh:
        for line in fh:
            if not line.strip():
                continue
            kind = json.loads(line).get("kind")
            if kind != "document":
                head += [line] if kind != "end" else []
                continue
            if batch and (len(batch) >= BATCH_DOCUMENTS or size + len(line) > BATCH_BYTES):
                yield b"".join(head + batch), len(batch)
                batch, size = [], 0
            batch.append(line)
            size += len(line)
    yield b"".join(head + batch), len(batch)


@guarded
def import_collection(
    file: Annotated[Path, typer.Option(exists=True, dir_okay=False, help="A file `export` wrote.")],
    collection: Collection = "default",
    url: Url = "http://127.0.0.1:8000",
    api_key: ApiKeyOption = None,
) -> None:
    """Load an exported collection into a server: created as exported if new; without encoding when its backbone
    is the same; run it again after an interruption and what is stored already is skipped."""
    totals = {"from_vectors": 0, "encoded": 0, "skipped": 0}
    with _client(url, api_key) as http, tqdm(desc="import", unit=" docs") as bar:
        for body, count in requests_of(file):
            report = _post(http, f"/collections/{collection}/import", body)
            for how in totals:
                totals[how] += report[how]
            bar.update(count)
    typer.echo(json.dumps({"collection": collection, **totals, "correction": report["correction"]}))


def _post(http: httpx.Client, path: str, body: bytes) -> dict[str, Any]:
    """One request, again after Retry-After while the new collection's backbone loads (503) or the server is busy."""
    for _ in range(120):
        response = http.post(path, content=body, headers={"Content-Type": "application/x-ndjson"})
        if response.status_code not in (429, 503):
            break
        time.sleep(float(response.headers.get("Retry-After", "1")))
    if response.status_code != 200:
        raise fail(f"{response.status_code}: {response.text}", 2)
    answer: dict[str, Any] = response.json()
    return answer
