"""`pip install .` (what the Dockerfile runs): the installed package finds its page and bundled data anywhere."""

import json
import os
import subprocess
import sys
import zipfile

from tests.conftest import ROOT

WHERE = """
import json
from app.api.routes.ops import PAGE
from app.core.config import TUNE_PAIRS, Settings
s = Settings()
print(json.dumps({"models": str(s.models_dir), "tune": [str(p) for p in TUNE_PAIRS], "page": str(PAGE),
                  "data": str(s.data_dir.resolve()), "artifacts": len(list(s.models_dir.glob("*/*.npz")))}))
"""


def test_the_installed_package_carries_its_page_corrections_and_sts_b(tmp_path):
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "app/api/static/index.html",
        "app/bundled/models/all-MiniLM-L6-v2/mean.npz",
        "app/bundled/stsbenchmark/sts-train.csv",
        "app/bundled/stsbenchmark/sts-test.csv",
    } <= names
    target, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CE_")} | {"PYTHONPATH": str(target)}
    found = subprocess.run([sys.executable, "-c", WHERE], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    where = json.loads(found.stdout)
    assert where["artifacts"] == 4
    assert all(path.startswith(str(target)) for path in [where["models"], where["page"], *where["tune"]])
    assert where["data"] == str(elsewhere / "var")  # state goes under the working folder, not site-packages
