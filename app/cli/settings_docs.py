"""`settings`: every setting's table, printed or written into the README and docs/configuration.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli.options import EXIT_BAD_INPUT
from app.core.settings_table import documents, reference, with_table

ROOT = Path(__file__).resolve().parents[2]


def settings(
    write: Annotated[bool, typer.Option(help="Rewrite the tables in README.md and docs/configuration.md.")] = False,
    check: Annotated[bool, typer.Option(help="Exit 1 if a table there differs from the code's settings.")] = False,
) -> None:
    """Print every setting (variable, default, group, description) as docs/configuration.md lists them."""
    if not (write or check):
        typer.echo(reference())
        return
    stale = []
    for path, table in documents(ROOT).items():
        if not path.is_file():
            typer.secho(f"{path} is not here: run this in a checkout", fg=typer.colors.RED, err=True)
            raise typer.Exit(EXIT_BAD_INPUT)
        text = path.read_text(encoding="utf-8")
        if with_table(text, table) != text:
            stale.append(path)
            if write:
                path.write_text(with_table(text, table), encoding="utf-8")
    verb = "rewrote" if write else "out of date:"
    typer.echo(f"{verb} {', '.join(str(p.relative_to(ROOT)) for p in stale)}" if stale else "the tables are current")
    if check and stale and not write:
        raise typer.Exit(1)
