"""The layout a newcomer reads the architecture from: folders by role, short modules, a server that imports
no offline or benchmark code, bundled data found through the package."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.config import MODELS_DIR, STS_DIR, TUNE_PAIRS, Settings
from tests.conftest import ROOT

APP = ROOT / "app"
ENTRY_POINTS = {"__init__.py", "__main__.py", "main.py"}


def test_no_module_is_loose_at_the_top_of_app():
    loose = sorted(p.name for p in APP.glob("*.py") if p.name not in ENTRY_POINTS)
    assert loose == []


def test_every_module_stays_under_300_lines():
    long = {str(p.relative_to(APP)): n for p in APP.rglob("*.py") if (n := len(p.read_text().splitlines())) > 300}
    assert long == {}


def test_the_formatter_owns_the_layout():
    skipped = [
        f"{p.relative_to(ROOT)}:{i}"
        for folder in (APP, ROOT / "tests", ROOT / "clients")
        for p in folder.rglob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if line.rstrip().endswith("# fmt: " + "skip")
    ]
    assert skipped == []


@pytest.mark.process
def test_the_server_imports_no_offline_benchmark_or_cli_code():
    code = "import json, sys; import app.main; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert [m for m in loaded if m.startswith(("app.offline", "app.benchmarks", "app.cli"))] == []
    assert "torch" not in loaded  # the hashing backbone and the API need no torch until a backbone asks for it


def test_bundled_corrections_and_sts_b_are_found_through_the_package():
    settings = Settings()
    assert settings.models_dir == MODELS_DIR == (APP / "bundled" / "models").resolve()
    assert sorted(p.name for p in MODELS_DIR.glob("*/*.npz")) == [
        "cls.npz",
        "embedding_avg.npz",
        "first_last_avg.npz",
        "mean.npz",
    ]
    assert TUNE_PAIRS == (STS_DIR / "sts-train.csv", STS_DIR / "sts-dev.csv")
    assert all(p.is_file() for p in TUNE_PAIRS)
    assert not settings.data_dir.is_absolute()  # under the working folder, never inside the installed package


# The layers docs/development.md draws, lowest first: a module imports from its own layer or those below.
LAYERS = [
    "core",
    "store",
    "backbones",
    "correction",
    "engine",
    "index",
    "shards",
    "services",
    "offline",
    "api",
    "main",
    "benchmarks",
    "cli",
    "__main__",
]


def app_imports(path) -> set[str]:
    """Every app module `path` imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("app."):
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("app.")}
    return found


def layer_of(module: str) -> str:
    return module.split(".")[1]


def modules() -> dict[str, object]:
    return {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p for p in APP.rglob("*.py")}


def test_every_import_points_down_the_layers():
    assert sorted({layer_of(m) for m in modules() if m != "app"}) == sorted(LAYERS)
    upward = sorted(
        f"{module} -> {target}"
        for module, path in modules().items()
        if module != "app"
        for target in app_imports(path)
        if LAYERS.index(layer_of(target)) > LAYERS.index(layer_of(module))
    )
    assert upward == []


def test_no_import_cycle_between_modules():
    known = modules()
    graph = {m: {t for t in app_imports(p) if t in known and t != m} for m, p in known.items()}
    done: set[str] = set()

    def cycle_from(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return path[path.index(module) :] + [module]
        if module in done:
            return None
        for target in sorted(graph[module]):
            if found := cycle_from(target, [*path, module]):
                return found
        done.add(module)
        return None

    assert [c for m in sorted(graph) if (c := cycle_from(m, []))] == []


# Test modules mirror the package: tests/<package path>/test_<module>.py checks app/<package path>/<module>.py. These
# folders hold tests of another kind: across processes and features, the client package, the image.
NOT_MIRRORS = {"integration", "clients", "container"}
REPO_CHECKS = {
    "test_layout.py",
    "test_markers.py",
    "test_docs.py",
    "test_container.py",
}  # the repository's rules, not a module's


def own_test(module: Path) -> Path:
    relative = module.relative_to(APP)
    return ROOT / "tests" / relative.parent / f"test_{relative.name}"


def test_every_test_module_in_a_mirrored_folder_names_a_module():
    tests = [
        p for p in (ROOT / "tests").rglob("test_*.py") if p.relative_to(ROOT / "tests").parts[0] not in NOT_MIRRORS
    ]
    named = {own_test(p) for p in APP.rglob("*.py")}
    orphans = sorted(str(p.relative_to(ROOT)) for p in tests if p not in named and p.name not in REPO_CHECKS)
    assert orphans == []


def test_every_module_has_a_test_module_of_its_own():
    modules = [p for p in APP.rglob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert sorted(str(p.relative_to(APP)) for p in modules if not own_test(p).is_file()) == []


@pytest.mark.process
def test_nothing_the_checkout_ignores_is_tracked():
    """CI fails when a test run changes the checkout; an ignored file that is tracked (.coverage was) does."""
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--ignored", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert tracked == []


def test_no_command_function_runs_over_50_lines():
    """Commands parse and call: the work lives in offline/ and benchmarks/ (options are aliases, not inline)."""
    long = {
        f"{p.relative_to(APP)}:{node.name}": node.end_lineno - node.lineno + 1
        for p in (APP / "cli").rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > 50
    }
    assert long == {}
