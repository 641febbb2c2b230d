"""Unit tests stand apart: a test that starts another process (the server, the CLI, a Ray node) says so with the
`process` marker, and one that says so does, so that `make unit` runs exactly the in-process tests."""

import ast
from pathlib import Path

from tests.conftest import CROSS_PROCESS_FOLDERS, ROOT

TESTS = ROOT / "tests"
STARTERS = {"start_server", "run_cli", "keyed_server", "LocalRedisCluster"}  # helpers that start child processes
STARTING_MODULES = {"subprocess", "ray"}  # any call on these modules starts (or joins) another process
STARTING_FIXTURES = {"redis_cluster", "own_redis_cluster"}  # shared fixtures that start child processes


def starts_directly(node: ast.AST) -> bool:
    """Whether `node` holds a call that starts a process itself."""
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        f = call.func
        if isinstance(f, ast.Name) and f.id in STARTERS:
            return True
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in STARTING_MODULES:
            return True
    return False


def used_names(fn: ast.FunctionDef) -> set[str]:
    """The module functions `fn` calls and the fixtures it asks for."""
    called = {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return called | {a.arg for a in fn.args.args}


def starting_functions(tree: ast.Module) -> set[str]:
    """The module's functions (tests, fixtures, helpers) that start a process, directly or through one another."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    starting = {name for name, fn in functions.items() if starts_directly(fn) or used_names(fn) & STARTING_FIXTURES}
    while grown := {name for name, fn in functions.items() if name not in starting and used_names(fn) & starting}:
        starting |= grown
    return starting


def is_process_mark(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "process" for n in ast.walk(node))


def marked_tests(tree: ast.Module) -> tuple[set[str], bool]:
    """The tests that carry the marker, and whether the whole module does (`pytestmark`)."""
    whole = any(
        isinstance(n, ast.Assign)
        and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)
        and is_process_mark(n)
        for n in tree.body
    )
    tests = {
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and any(map(is_process_mark, n.decorator_list))
    }
    return tests, whole


def mirrored_test_modules() -> list[Path]:
    return [p for p in TESTS.rglob("test_*.py") if p.relative_to(TESTS).parts[0] not in CROSS_PROCESS_FOLDERS]


def test_every_test_that_starts_a_process_is_marked_and_no_other_is():
    wrong = []
    for path in mirrored_test_modules():
        tree = ast.parse(path.read_text())
        tests = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        tests = {t for t in tests if t.startswith("test_")}
        starting, (marked, whole) = starting_functions(tree) & tests, marked_tests(tree)
        marked = tests if whole else marked
        wrong += [f"{path.relative_to(ROOT)}::{t} starts a process, unmarked" for t in sorted(starting - marked)]
        wrong += [f"{path.relative_to(ROOT)}::{t} is marked but starts none" for t in sorted(marked - starting)]
    assert wrong == []


def test_the_analysis_sees_a_start_through_a_helper_and_a_fixture():
    tree = ast.parse(
        "def helper():\n    subprocess.run(['x'])\n"
        "def fixture_like():\n    return helper()\n"
        "def test_a(fixture_like):\n    pass\n"
        "def test_b():\n    start_server({}, 'u')\n"
        "def test_c():\n    assert 1\n"
    )
    assert starting_functions(tree) == {"helper", "fixture_like", "test_a", "test_b"}
