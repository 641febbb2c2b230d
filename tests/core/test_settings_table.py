"""The settings' tables and help are made from Settings: the README's and docs' tables equal what the code says."""

from __future__ import annotations

from pathlib import Path

from app.core.config import Settings, variable_of
from app.core.search_settings import SearchSettings
from app.core.settings_table import BEGIN, END, FIRST_SETTINGS, documents, help_text, markdown, rows, shown_default
from tests.conftest import ROOT


def test_the_readme_and_configuration_tables_are_the_generated_ones():
    for path, table in documents(ROOT).items():
        text = path.read_text(encoding="utf-8")
        held = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
        assert held == table, f"{path.name} is stale: run `python -m app settings --write`"


def test_every_setting_has_a_group_a_description_and_a_row():
    listed = rows()
    assert [r[0] for r in listed] == [variable_of(n) for n in Settings.model_fields]
    assert all(description and group for _, _, description, group in listed)
    assert len(Settings.model_fields) < 40
    assert set(FIRST_SETTINGS) <= set(Settings.model_fields) and len(FIRST_SETTINGS) == 10


def test_defaults_are_shown_as_a_deployer_writes_them():
    shown = {variable: default for variable, default, _, _ in rows()}
    assert shown["CE_BACKBONE"] == "onnx" and shown["CE_SNAPSHOT_INTERVAL"] == "60"
    assert shown["CE_MODEL_PATH"] == "unset" and shown["RAY_ADDRESS"] == "unset"
    assert shown["CE_API_KEYS"] == "[]" and shown["CE_SEARCH"] == "{}" and shown["CE_MODELS_DIR"] == "bundled"
    assert shown_default(SearchSettings(fusion="rrf")) == '{"fusion": "rrf"}'
    assert shown_default(Path("var")) == "var" and shown_default(True) == "true"


def test_the_short_table_has_no_group_column_and_the_help_lists_every_variable_by_group():
    short = markdown(FIRST_SETTINGS).splitlines()
    assert short[0] == "| Setting | Default | What it does |" and len(short) == 2 + len(FIRST_SETTINGS)
    text = help_text()
    assert all(variable_of(name) in text for name in Settings.model_fields)
    assert text.index("[bold]Backbone[/bold]") < text.index("CE_BACKBONE") < text.index("[bold]Limits[/bold]")
