"""What every command shares: input and artifact errors as one line and an exit code scripts test, poolings checked."""

from __future__ import annotations

import pytest
import typer

from app.cli.options import EXIT_BAD_ARTIFACT, EXIT_BAD_INPUT, guarded, poolings
from app.core.errors import ArtifactError, Conflict, NotReady
from app.core.names import Pooling


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ValueError("bad pairs file"), EXIT_BAD_INPUT),
        (ArtifactError("corrupt"), EXIT_BAD_ARTIFACT),
        (Conflict("collection 'x' exists"), EXIT_BAD_INPUT),
    ],
)
def test_errors_become_a_line_and_an_exit_code(error, code, capsys):
    @guarded
    def command():
        raise error

    with pytest.raises(typer.Exit) as exited:
        command()
    assert exited.value.exit_code == code and str(error) in capsys.readouterr().err


def test_a_server_error_is_not_hidden_behind_an_exit_code():
    @guarded
    def command():
        raise NotReady("the encoder stopped")

    with pytest.raises(NotReady):
        command()


def test_poolings_default_to_all_and_an_unknown_one_is_named():
    assert poolings(None) == list(Pooling) and poolings(["cls"]) == [Pooling.CLS]
    with pytest.raises(typer.Exit):
        poolings(["max"])
