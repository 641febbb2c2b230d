"""`serve` the HTTP API, and `index` documents into the store every server follows."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.options import EXIT_BAD_INPUT, AddressOpt, EngineOpt, JsonLastOpt, WorkersOpt, fail, guarded
from app.core.config import get_settings

if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.services.documents import DocumentInput


@guarded
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address; default CE_HOST.")] = None,
    port: Annotated[int | None, typer.Option(help="Port; default CE_PORT.")] = None,
) -> None:
    """Serve the HTTP API (embed, similarity, documents, search) with uvicorn."""
    import threadpoolctl
    import uvicorn

    from app.main import create_app

    settings = get_settings().model_copy(update={k: v for k, v in {"host": host, "port": port}.items() if v})
    settings.check_exposure()
    from app.backbones.catalog import READS_FOLDER

    if settings.backbone in READS_FOLDER:  # a folder it cannot serve: one line now, not a traceback later
        from app.backbones.local import check_model

        check_model(settings)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # The encoder thread runs Python between torch kernels; with the default 5 ms GIL switch interval each
    # hand-off to the event loop (request in, response out) can wait that long. 0.5 ms keeps them prompt.
    sys.setswitchinterval(0.0005)
    # The correction's small matrix products need no BLAS threads; idle BLAS threads spin against torch's.
    threadpoolctl.threadpool_limits(1, user_api="blas")
    # No access log: a line per request costs the event loop as much as routing it; /metrics counts requests
    # by route and status, and errors are logged with their request id.
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, access_log=False)


@guarded
def index_documents(
    corpus: Annotated[Path, typer.Option(help="One text per line, or JSON lines with id, text, metadata.")],
    batch: Annotated[int, typer.Option(min=1, help="Documents per write (each acknowledged by Redis).")] = 256,
    collection: Annotated[str | None, typer.Option(help="Into this collection; default the default one.")] = None,
    restart: Annotated[
        bool, typer.Option(help="Read the corpus from its start, not where the last run stopped.")
    ] = False,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = 2,
    as_json: JsonLastOpt = False,
) -> None:
    """Stream a corpus into the store (and so into every index built from it), a batch at a time in bounded
    memory. A killed run, started again, resumes after the last batch Redis acknowledged; documents already stored
    with the same text and metadata are not encoded again. Prints the documents per second."""
    if engine == "ray" and collection:
        raise fail("--engine ray indexes into the default collection only", EXIT_BAD_INPUT)
    if engine == "ray":
        from app.offline.datasets import read_documents

        _index_on_ray(read_documents(corpus), address, workers)
        return
    from app.offline.ingestion import Ingestion
    from app.services.container import Services

    settings = get_settings()
    # A batch is bounded by --batch alone: the per-request limits protect a server's other clients, not this run.
    unbounded = {"max_texts": max(batch, 1), "max_request_tokens": 2**62}
    services = Services.from_settings(settings.model_copy(update=unbounded), search=False)
    try:
        documents = services.collections.get(collection).services.documents if collection else services.documents
        report = Ingestion(services.store, documents).run(corpus, batch=batch, restart=restart)
        resumed = f", resumed after line {report.resumed_at_line:,}" if report.resumed_at_line else ""
        typer.echo(
            f"indexed {report.read:,} documents ({report.encoded:,} encoded, {report.unchanged:,} already "
            f"stored){resumed} in {report.seconds:.1f} s: {report.per_second:,.0f} documents per second; "
            f"the store holds {documents.count():,}",
            err=as_json,
        )
        if as_json:
            typer.echo(json.dumps({**report.to_dict(), "stored": documents.count()}))
    finally:
        services.close()


def _index_on_ray(docs: Sequence[DocumentInput], address: str | None, workers: int) -> None:
    """Ray actors encode and write to the shared Redis; this process only counts what is there."""
    from app.cli.offline import offline_backbone
    from app.offline.distributed import index_on_ray, ray_session
    from app.store.redis_store import RedisStore

    settings = get_settings()
    try:
        with ray_session(address, workers):
            written = index_on_ray(settings, docs, workers=workers)
    except ValueError as exc:
        raise fail(str(exc), EXIT_BAD_INPUT) from None
    if settings.redis_url is None:
        raise fail("--engine ray writes to the Redis CE_REDIS_URL names: set it", EXIT_BAD_INPUT)
    store = RedisStore.from_url(
        settings.redis_url, prefix=settings.key_prefix, wait_replicas=settings.redis_wait_replicas
    )
    key = offline_backbone(settings).fingerprint  # the default collection's key
    typer.echo(f"indexed {written} documents on Ray; the store holds {store.documents.count(key)}")
    store.close()
