"""`known-items`: a judged collection of identifier and rare-word queries, built from any collection or corpus, for
`eval-search` and the fusion study: the searches a hybrid ranking must put first."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli.options import EXIT_BAD_INPUT, fail, guarded


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

    if (data is None) == (corpus is None):
        raise fail("give one of --data (a BEIR folder) or --corpus (plain texts)", EXIT_BAD_INPUT)
    base = read_judged_corpus(data) if data else from_texts(read_corpus(corpus))
    if docs is not None:
        base = replace(base, doc_ids=base.doc_ids[:docs], doc_texts=base.doc_texts[:docs])
    try:
        built = known_items(replace(base, query_ids=[], query_texts=[], qrels={}), identifiers=identifiers,
                            rare=rare, seed=seed)  # fmt: skip
    except ValueError as exc:
        raise fail(str(exc), EXIT_BAD_INPUT) from None
    write_beir(built, out)
    typer.echo(f"{out}: {len(built.doc_ids):,} documents, {len(built.query_ids)} queries "
               f"({min(identifiers, len(built.query_ids))} identifiers, the rest rare words)")  # fmt: skip
