"""`verify`: the store against a collection's indexes, as a restart would open them or as a server holds them."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from app.cli.options import JsonOpt, fail, guarded, settings_for

if TYPE_CHECKING:
    from app.index.builder import IndexBuilder


EXIT_DRIFT = 1


@guarded
def verify(
    collection: Annotated[str, typer.Option(help="The collection to check.")] = "default",
    repair: Annotated[bool, typer.Option(help="Rebuild the indexes from the store where they differ.")] = False,
    url: Annotated[
        str | None, typer.Option(help="Check a running server's indexes (http://host:port) instead of its snapshot.")
    ] = None,
    api_key: Annotated[str | None, typer.Option(envvar="CE_VERIFY_API_KEY", help="Bearer token for --url.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Compare every stored document id and passage with the dense and the lexical index and name each difference.
    Without --url, the snapshot a restart would load (caught up with the change log); --repair then rebuilds it from
    the store. With --url, the indexes a server holds now; --repair makes it rebuild them. Exit 1 on drift left."""
    report = _ask_server(url, collection, repair, api_key) if url else _check_snapshot(collection, repair)
    if as_json:
        typer.echo(json.dumps(report))
    else:
        for name in ("dense", "lexical"):
            found = report.get(name)
            if found is not None:
                typer.echo(
                    f"{name}: {found['missing']} missing, {found['extra']} extra"
                    + (f" (e.g. {', '.join(found['examples'])})" if found["examples"] else "")
                )
        typer.echo(
            f"{report['stored']} documents stored; {'ok' if report['ok'] else 'DRIFT'}"
            + (f"; repair: {report['repair']}" if report.get("repair") else "")
        )
    if not report["ok"] and report.get("repair") in (None, "not asked"):
        raise typer.Exit(EXIT_DRIFT)


def _ask_server(url: str, collection: str, repair: bool, api_key: str | None) -> dict[str, Any]:
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    response = httpx.post(
        f"{url.rstrip('/')}/collections/{collection}/verify", params={"repair": repair}, headers=headers, timeout=None
    )
    if response.status_code != 200:
        raise fail(f"{response.status_code}: {response.text}", 2)
    answer: dict[str, Any] = response.json()
    return answer


def _check_snapshot(collection: str, repair: bool) -> dict[str, Any]:
    """The snapshot caught up with the change log, checked; rebuilt from the store and written again on --repair."""
    from app.index.integrity import check_full
    from app.index.lexical import Analyzer
    from app.index.snapshot import SnapshotFile, SnapshotRefused
    from app.services.container import Services

    settings = settings_for()
    services = Services.from_settings(settings, search=False)
    try:
        served = services.collections.get(collection).services.served
        builder = copy.copy(served.builder)  # a writer's reads no texts into a lexical index; this one must
        builder.analyzer = Analyzer.of(settings.search)
        builder.work_dir = settings.data_dir / "lexical"
        snapshots = SnapshotFile(services.store, served.collection_key, settings.data_dir / "index")
        correction = served.current.correction
        try:
            index = snapshots.load(correction, builder)
            builder.catch_up(index)
            report = {"snapshot": str(snapshots.path), **check_full(builder, index).describe()}
        except SnapshotRefused as why:  # a restart would build from the store: nothing on disk can drift
            index, report = None, {"snapshot": None, "refused": str(why), **_empty(builder)}
        if repair and index is not None and not report["ok"]:
            index.close()
            index = builder.build(correction, progress=True)
            snapshots.write(*snapshots.capture(index))
            report["repair"] = "rebuilt from the store; snapshot written"
        elif not report["ok"]:
            report["repair"] = "not asked"
        if index is not None:
            index.close()
        return report
    finally:
        services.close()


def _empty(builder: IndexBuilder) -> dict[str, Any]:
    count = builder.stored_count()
    return {"ok": True, "full": True, "stored": count, "dense": None, "lexical": None}
