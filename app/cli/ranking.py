"""`known-items`: a judged collection of identifier and rare-word queries, built from any collection or corpus, for
`eval-search`: the searches a hybrid ranking must put first. `tune`: a collection's ranking chosen on the judgments
sent over HTTP (what POST /collections/{name}/tune runs in a child process)."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from app.cli.options import EXIT_BAD_INPUT, fail, guarded, settings_for

if TYPE_CHECKING:
    from app.core.config import Settings
    from app.index.fusion import Candidates, Ranking
    from app.services.collections.wiring import CollectionServices
    from app.services.container import Services


@guarded
def known_items(
    out: Annotated[Path, typer.Option(help="Folder to write (BEIR layout: corpus.jsonl, queries.jsonl, qrels).")],
    data: Annotated[Path | None, typer.Option(help="A BEIR-layout collection to plant the identifiers in.")] = None,
    corpus: Annotated[Path | None, typer.Option(help="Or plain texts, one document per line.")] = None,
    docs: Annotated[int | None, typer.Option(min=1, help="Keep only the first N documents.")] = None,
    identifiers: Annotated[int, typer.Option(min=0, help="Identifier queries (and as many decoys planted).")] = 100,
    rare: Annotated[int, typer.Option(min=0, help="Rare-word queries: words found in one document only.")] = 100,
    seed: Annotated[int, typer.Option(help="Which documents, identifiers and words are drawn.")] = 0,
) -> None:
    """Plant identifiers of five shapes (SKU-48213, ERR417X, CVE-2019-31877, AX7741, ticket #503112) in single
    documents, decoys of the same shapes in as many others, and pick words that occur in one document only; each
    becomes a query whose one relevant document is that document. Evaluate with `eval-search --data OUT`."""
    from dataclasses import replace

    from app.offline.datasets import read_corpus
    from app.offline.known_items import from_texts, known_items, write_beir
    from app.offline.retrieval import read_judged_corpus

    if data is not None and corpus is None:
        base = read_judged_corpus(data)
    elif corpus is not None and data is None:
        base = from_texts(read_corpus(corpus))
    else:
        raise fail("give one of --data (a BEIR folder) or --corpus (plain texts)", EXIT_BAD_INPUT)
    if docs is not None:
        base = replace(base, doc_ids=base.doc_ids[:docs], doc_texts=base.doc_texts[:docs])
    try:
        built = known_items(
            replace(base, query_ids=[], query_texts=[], qrels={}), identifiers=identifiers, rare=rare, seed=seed
        )
    except ValueError as exc:
        raise fail(str(exc), EXIT_BAD_INPUT) from None
    write_beir(built, out)
    typer.echo(
        f"{out}: {len(built.doc_ids):,} documents, {len(built.query_ids)} queries "
        f"({min(identifiers, len(built.query_ids))} identifiers, the rest rare words)"
    )


@guarded
def tune(
    collection: Annotated[str, typer.Option(help="The collection whose stored judgments to tune on.")] = "default",
    publish: Annotated[bool, typer.Option(help="Publish each choice the held-out queries allow.")] = False,
) -> None:
    """Choose the collection's search space (among its correction's family, as `fit --tune-qrels` does) and then its
    ranking (dense, lexical, each fusion and weight) on the judgments stored over HTTP: two thirds of the judged
    queries choose under the never-worse guard, the held-out third decides whether each choice replaces what the
    collection serves; with --publish every server then follows. Prints the record as JSON."""
    import json

    settings = settings_for()
    with tuning_services(settings) as services:
        space = _tune_space(services, collection, publish)
    with tuning_services(settings) as services:  # opened again: in the space just published, if one was
        record = {**_tune_ranking(services, collection, publish), "search_space": space}
    typer.echo(
        f"collection {collection}: search space: {space['reason'] if space else 'no correction'}; ranking: "
        f"{record['reason']}; held out {record['held_out']}",
        err=True,
    )
    typer.echo(json.dumps(record))


def _judged(services: Services, collection: str) -> tuple[CollectionServices, dict[str, dict[str, int]]]:
    from app.offline.judged_ranking import judged_queries

    served = services.collections.get(collection).services
    return served, judged_queries(services.store.judgments.all(served.served.collection_key))


def _tune_space(services: Services, collection: str, publish: bool) -> dict[str, Any] | None:
    """The search space step: chosen on the stored raw vectors; published to the collection when kept."""
    from app.correction.publication import publish as publish_artifact
    from app.offline.collection_fit import stored_documents
    from app.offline.judged_ranking import tune_space
    from app.services.collections.spec import DEFAULT, set_correction

    served, qrels = _judged(services, collection)
    correction = served.served.current.correction
    if correction is None:
        return None
    docs, raw = stored_documents(services.store, served.served.collection_key, served.served.builder.raw_dim)
    queries = dict(zip(qrels, served.embedding.encode_raw(list(qrels)), strict=True))
    try:
        chosen, record = tune_space(correction.artifact, [d.id for d in docs], raw, queries, qrels)
    except ValueError as exc:
        raise fail(str(exc), EXIT_BAD_INPUT) from None
    if publish and chosen is not None:
        publish_artifact(services.store, chosen, make_current=collection == DEFAULT)
        if collection != DEFAULT:
            set_correction(services.store.collections, collection, chosen.id)
        record["correction"] = chosen.id
    record["published"] = publish and chosen is not None
    return record


def _tune_ranking(services: Services, collection: str, publish: bool) -> dict[str, Any]:
    """The ranking step: chosen on candidate lists the collection's search service makes; published when kept."""
    from app.index.fusion import fuse
    from app.offline.judged_ranking import tune as tune_on
    from app.services.ranking_choice import ranking_for

    served, qrels = _judged(services, collection)
    index, search = served.served.current, served.search
    default = ranking_for(search.settings, index.correction)

    def candidates(query: str, ranking: Ranking) -> Candidates:
        """The lists as /search makes them for `ranking`: its dense list searched again when it asks for feedback."""
        vector = served.embedding.in_space([query], index.search_correction)
        found, dense = search.candidates(index, query, vector, "hybrid", default.candidates, None)
        if not ranking.feedback:
            return found
        top = ranking.feedback_from(fuse(found, ranking))
        return search.feed_back(index, vector, top, found, dense, ranking, default.candidates, None)

    try:
        record = tune_on(candidates, qrels, default)
    except ValueError as exc:
        raise fail(str(exc), EXIT_BAD_INPUT) from None
    if publish and record["published"]:
        services.store.judgments.publish_ranking(served.served.collection_key, record)
    record["published"] = publish and record["published"]
    return record


@contextmanager
def tuning_services(settings: Settings) -> Iterator[Services]:
    """The services on the server's Redis and ONNX graphs, with an index folder of their own (built from the store:
    a running server's snapshots are never written by this process), removed after."""
    from app.correction.publication import resolve_correction
    from app.engine.pool import engine_for
    from app.services.container import Services, connect_store

    folder = settings.data_dir / f"tune-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    if settings.graphs_dir.is_dir():
        (folder / settings.graphs_dir.name).symlink_to(settings.graphs_dir.resolve(), target_is_directory=True)
    store, embedded = connect_store(settings)
    services = None
    try:
        engine = engine_for(settings)
        artifact = resolve_correction(settings.correction, store, engine.backbone, settings.models_dir)
        services = Services(
            settings.model_copy(update={"data_dir": folder}), engine, store, artifact, embedded=embedded
        )
        yield services
    finally:
        if services is not None:
            services.close()
        else:
            store.close()
        shutil.rmtree(folder, ignore_errors=True)
