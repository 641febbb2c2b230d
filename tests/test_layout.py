"""The layout a newcomer reads the architecture from: folders by role, short modules, a server that imports
no offline or benchmark code, bundled data found through the package."""

import json
import subprocess
import sys

from app.core.config import MODELS_DIR, STS_DIR, Settings
from tests.conftest import ROOT

APP = ROOT / "app"
ENTRY_POINTS = {"__init__.py", "__main__.py", "main.py"}


def test_no_module_is_loose_at_the_top_of_app():
    loose = sorted(p.name for p in APP.glob("*.py") if p.name not in ENTRY_POINTS)
    assert loose == []


def test_runtime_modules_stay_under_300_lines():
    long = {
        str(p.relative_to(APP)): n
        for p in APP.rglob("*.py")
        if p.relative_to(APP).parts[0] not in ("cli", "benchmarks") and (n := len(p.read_text().splitlines())) > 300
    }
    assert long == {}


def test_the_server_imports_no_offline_benchmark_or_cli_code():
    code = "import json, sys; import app.main; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert [m for m in loaded if m.startswith(("app.offline", "app.benchmarks", "app.cli"))] == []
    assert "torch" not in loaded  # the hashing backbone and the API need no torch until a backbone asks for it


def test_bundled_corrections_and_sts_b_are_found_through_the_package():
    settings = Settings()
    assert settings.models_dir == MODELS_DIR == (APP / "bundled" / "models").resolve()
    assert sorted(p.name for p in MODELS_DIR.glob("*/*.npz")) == [
        "cls.npz", "embedding_avg.npz", "first_last_avg.npz", "mean.npz",
    ]  # fmt: skip
    assert settings.tune_pairs == [STS_DIR / "sts-train.csv", STS_DIR / "sts-dev.csv"]
    assert all(p.is_file() for p in settings.tune_pairs)
    assert not settings.data_dir.is_absolute()  # under the working folder, never inside the installed package
