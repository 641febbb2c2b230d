"""`collections list|create|delete`, and `fit --collection`: a correction fitted on a collection's stored documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from app.cli.options import EXIT_BAD_INPUT, JsonOpt, fail, guarded, settings_for

if TYPE_CHECKING:
    from app.services.container import Services


collections = typer.Typer(
    help="Named collections: each its own backbone, pooling, correction and index.", no_args_is_help=True
)


def _services() -> Services:
    """The service's parts a command needs to manage collections: no index is opened (a writer's view)."""
    from app.services.container import Services

    return Services.from_settings(settings_for(), search=False)


@collections.command("list")
@guarded
def list_collections(as_json: JsonOpt = False) -> None:
    """Every collection with its backbone, pooling, correction and document count."""
    services = _services()
    try:
        described = services.collections.describe_all()
    finally:
        services.close()
    for c in described:
        if as_json:
            typer.echo(json.dumps({k: v for k, v in c.items() if k != "index"}))
        else:
            typer.echo(
                f"{c['name']}: {c['backbone']}/{c['pooling']}, correction {c['correction']}, "
                f"{c['documents']} documents, index {c['index_factory']}"
            )


@collections.command("create")
@guarded
def create_collection(
    name: Annotated[str, typer.Argument(help="[a-z0-9][a-z0-9_-]{0,63}")],
    backbone: Annotated[
        str | None, typer.Option(help="Default CE_BACKBONE; others need CE_COLLECTION_BACKBONES.")
    ] = None,
    pooling: Annotated[str | None, typer.Option(help="Default CE_POOLING.")] = None,
    correction: Annotated[
        str, typer.Option(help="auto (the backbone's current correction), none, or an artifact id in Redis.")
    ] = "auto",
    index_factory: Annotated[str | None, typer.Option(help="Default CE_INDEX_FACTORY.")] = None,
) -> None:
    """Create a collection (exit 2 if the name is taken or invalid)."""
    services = _services()
    try:
        created = services.collections.create(
            name, backbone=backbone, pooling=pooling, correction=correction, index_factory=index_factory
        )
    finally:
        services.close()
    typer.echo(f"created {name}: {created['backbone']}/{created['pooling']}, correction {created['correction']}")


@collections.command("delete")
@guarded
def delete_collection(name: str) -> None:
    """Delete a collection with its documents, vectors, change log and snapshot."""
    services = _services()
    try:
        services.collections.delete(name)
    finally:
        services.close()
    typer.echo(f"deleted {name}")


def fit_collection(
    name: str,
    method: str,
    params: dict[str, Any],
    options: Any,
    judged_dirs: list[Path] | None,
    out: Path | None,
    publish: bool,
) -> None:
    """`fit --collection`: fit on the stored raw vectors; `auto` keeps the general correction unless labelled pairs
    show a clear gain (and without labelled pairs keeps it outright); `--publish` serves the result there."""
    from app.cli.offline import judged_sets, offline_backbone, tuning_pairs
    from app.correction.publication import load_version, write_artifact_file
    from app.correction.publication import publish as publish_artifact
    from app.offline.collection_fit import fit_collection_correction
    from app.services.collections.spec import CollectionSpec, set_correction
    from app.services.container import connect_store

    store, embedded = connect_store(settings_for())
    try:
        data = store.collections.get(name)
        if data is None:
            raise fail(f"no collection named {name!r}", EXIT_BAD_INPUT)
        spec = CollectionSpec.from_bytes(data)
        settings = settings_for(spec.pooling).model_copy(update={"backbone": spec.backbone})
        backbone = offline_backbone(settings)
        general = load_version(store, backbone, spec.correction) if spec.correction else None
        tuning = tuning_pairs(backbone, method, options.tune_pairs, options.no_tune, settings)
        judged = judged_sets(backbone, judged_dirs, settings)
        say = lambda line: typer.echo(f"collection {name}: {line}", err=True)  # noqa: E731
        chosen = fit_collection_correction(
            store, spec.collection_key, backbone, method, params, general, tuning, judged, say
        )
        if chosen is None:
            typer.echo(f"kept {spec.correction}", err=True)
            typer.echo(spec.correction or "none")
            return
        path = write_artifact_file(chosen, out or settings.data_dir / "artifacts" / f"{chosen.id}.npz")
        typer.echo(f"wrote {path}", err=True)
        if publish:
            publish_artifact(store, chosen, make_current=False)
            set_correction(store.collections, name, chosen.id)
            typer.echo(f"published {chosen.id} to collection {name}: every server rebuilds its index", err=True)
        typer.echo(chosen.id)
    finally:
        store.close()
        if embedded:
            embedded.stop()
