"""What every command shares: input and artifact errors as one line and an exit code scripts test, poolings checked;
and every default a command's --help states is the code's: the values Typer prints are the parameters' own, a
setting a help names exists (with the default it quotes), and each default written in words is checked against the
constant it describes, so a changed constant fails here until its help says so."""

from __future__ import annotations

import re

import pytest
import typer

from app.cli import cli
from app.cli.options import EXIT_BAD_ARTIFACT, EXIT_BAD_INPUT, MethodOptions, guarded, method_options, poolings
from app.core.config import TUNE_PAIRS, Settings, variable_of
from app.core.errors import ArtifactError, Conflict, NotReady
from app.core.names import STUDIED_POOLINGS, Method, Pooling
from app.index.fusion import DEFAULT_FUSION, DEFAULT_WEIGHT, Ranking
from app.offline.adapt import DEFAULT_AUGMENTS


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
    assert poolings(None) == list(STUDIED_POOLINGS) and poolings(["cls"]) == [Pooling.CLS]
    with pytest.raises(typer.Exit):
        poolings(["maximum"])


def commands(group=None, path=()):
    group = group or typer.main.get_command(cli)
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


HELPS = [(f"{path} --{p.name}", p.help or "") for path, command in commands() for p in command.params]


def options(**given) -> MethodOptions:
    return method_options(**given)


# Each default a help states in words, and what in the code makes it true.
WORDED = {
    "default STS-B train + dev": lambda: [p.name for p in TUNE_PAIRS] == ["sts-train.csv", "sts-dev.csv"],
    "default STS-B train.": lambda: TUNE_PAIRS[0].name == "sts-train.csv",
    "top principal directions removed; default 1 / 0": lambda: (
        (
            options()._params_of(Method.ABTT)["drop"],
            options()._params_of(Method.WHITENING)["drop"],
        )
        == (1, 0)
    ),
    "output dims kept; default all": lambda: options()._params_of(Method.WHITENING)["dim"] is None,
    "(repeatable); default the four studied": lambda: poolings(None) == list(STUDIED_POOLINGS),
    f"hybrid, {DEFAULT_FUSION} fusion, lexical weight {DEFAULT_WEIGHT}": lambda: (
        (
            Ranking().mode,
            Ranking().fusion,
            Ranking().lexical_weight,
        )
        == ("hybrid", DEFAULT_FUSION, DEFAULT_WEIGHT)
    ),
    "default: dropout (simcse), shuffle,feature-cutoff (consert)": lambda: (
        DEFAULT_AUGMENTS == {"simcse": ("dropout",), "consert": ("shuffle", "feature-cutoff"), "none": ()}
    ),
}


def test_every_setting_a_help_names_exists_and_the_default_it_quotes_is_the_settings():
    fields = {variable_of(name): name for name in Settings.model_fields}
    named = [
        (where, var, quoted)
        for where, text in HELPS
        for var, quoted in re.findall(r"\b([A-Z]+_[A-Z_]+)\b(?: \(([^) ]*)\))?", text)
    ]
    assert named, "no help names a setting: the pattern no longer reads them"
    unknown = [(where, var) for where, var, _ in named if var not in fields]
    assert unknown == []
    quoted = {(where, var): (q, str(Settings.model_fields[fields[var]].default)) for where, var, q in named if q}
    assert quoted and all(q == default for q, default in quoted.values()), quoted


@pytest.mark.parametrize("phrase", list(WORDED))
def test_each_default_stated_in_words_is_in_a_help_and_true_of_the_code(phrase):
    assert any(phrase in text for _, text in HELPS), f"no help says {phrase!r} any more: update WORDED"
    assert WORDED[phrase]()


def test_a_help_stating_a_value_as_default_is_one_of_the_checked_kinds():
    """A number or a quoted name after "default" must come from Typer (the parameter's own) or be checked above."""
    stated = [
        (where, text)
        for where, text in HELPS
        if re.search(r"default:? \(?[0-9'\"]", text) and not any(phrase in text for phrase in WORDED)
    ]
    assert stated == []
