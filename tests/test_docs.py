"""The README's configuration table is the documentation of Settings: it must list every one."""

import re

from app.core.config import Settings
from tests.conftest import ROOT


def test_every_setting_is_in_the_readme_table():
    readme = (ROOT / "README.md").read_text()
    documented = set(re.findall(r"^\| `(CE_[A-Z_]+)`", readme, re.M))
    expected = {f"CE_{name.upper()}" for name in Settings.model_fields}
    assert documented == expected


def test_readme_gives_the_two_commands_first():
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```bash", 1)[1].split("```", 1)[0]
    assert "make run" in first_block and "make test" in first_block
