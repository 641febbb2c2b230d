"""The README and docs/configuration.md document Settings: every setting listed, the README short."""

import re

from app.core.config import Settings, variable_of
from tests.conftest import ROOT


def test_every_setting_is_in_the_configuration_page():
    page = (ROOT / "docs" / "configuration.md").read_text()
    documented = set(re.findall(r"^\| `((?:CE_|RAY_)[A-Z_]+)` \| `", page, re.M))
    assert documented == {variable_of(name) for name in Settings.model_fields}


def test_the_readme_is_a_first_screen_not_a_notebook():
    assert len((ROOT / "README.md").read_text().splitlines()) < 130


def test_readme_gives_the_two_commands_first():
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```bash", 1)[1].split("```", 1)[0]
    assert "make run" in first_block and "make test" in first_block
