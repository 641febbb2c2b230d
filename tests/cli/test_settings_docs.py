"""`python -m app settings`: prints the tables, and --check finds a stale one."""

from __future__ import annotations

from typer.testing import CliRunner

import app.cli.settings_docs as settings_command
from app.cli import cli


def test_settings_prints_every_variable_and_check_passes_on_this_checkout():
    printed = CliRunner().invoke(cli, ["settings"])
    assert printed.exit_code == 0 and "| `CE_SEARCH` |" in printed.output and "CE_FUSION" in printed.output
    checked = CliRunner().invoke(cli, ["settings", "--check"])
    assert checked.exit_code == 0 and "current" in checked.output


def test_check_fails_on_a_stale_table_and_write_mends_it(tmp_path, monkeypatch):
    from app.core.settings_table import BEGIN, END

    (tmp_path / "docs").mkdir()
    for path in (tmp_path / "README.md", tmp_path / "docs" / "configuration.md"):
        path.write_text(f"intro\n{BEGIN}\n| old |\n{END}\nafter\n")
    monkeypatch.setattr(settings_command, "ROOT", tmp_path)
    stale = CliRunner().invoke(cli, ["settings", "--check"])
    assert stale.exit_code == 1 and "README.md" in stale.output
    assert CliRunner().invoke(cli, ["settings", "--write"]).exit_code == 0
    assert CliRunner().invoke(cli, ["settings", "--check"]).exit_code == 0
    assert (tmp_path / "README.md").read_text().endswith(f"{END}\nafter\n")


def test_serve_help_lists_the_settings_by_group():
    shown = CliRunner().invoke(cli, ["serve", "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "CE_SNAPSHOT_INTERVAL (default 60)" in shown.output and "Scale-out" in shown.output
