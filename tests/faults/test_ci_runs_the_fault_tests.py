"""Issue 10 asks for the fault tests "passing in CI": nothing may skip or deselect them there.

CI is `.ci/run` -> `make test` -> `make pytest` -> `pytest -n 2 -q` with the `[tool.pytest]`
options of pyproject.toml. This test reads those three files and the fault-test modules and fails
if a change would quietly keep CI from running a fault test: a marker or keyword selection, an
ignore or deselect option, or a skip/skipif/xfail mark (the `slow` mark is allowed: CI runs it).
"""

from __future__ import annotations

import importlib
import inspect
import re
import shlex
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAULT_MODULES = sorted(p.stem for p in Path(__file__).parent.glob("test_*.py"))
#: pytest options that narrow what runs.
NARROWING = ("-m", "-k", "--deselect", "--ignore", "--ignore-glob", "--lf", "--last-failed", "-x")
#: Marks that keep a test from running or from failing.
NOT_RUN = {"skip", "skipif", "xfail"}


def narrowing(args: list[str]) -> list[str]:
    """The arguments among `args` that narrow the selection of tests."""
    return [a for a in args if a.split("=")[0] in NARROWING]


def test_ci_runs_make_test_whose_pytest_selects_every_test() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", ci, re.MULTILINE)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^test:.*\bpytest\b", makefile, re.MULTILINE)
    [recipe] = re.findall(r"^pytest:.*\n\t(.*)$", makefile, re.MULTILINE)
    command = shlex.split(recipe.split("||")[0])
    while command and re.fullmatch(r"[A-Z_]+=\S*", command[0]):  # environment assignments
        command.pop(0)
    assert command[1:3] == ["-m", "pytest"] and narrowing(command[3:]) == []
    assert not any(arg.startswith(("tests", "-p")) for arg in command[3:])  # no path or plugin filter
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"][
        "ini_options"
    ]
    assert options["testpaths"] == ["tests"]
    assert narrowing(shlex.split(options.get("addopts", ""))) == []


@pytest.mark.parametrize("name", FAULT_MODULES)
def test_no_fault_test_is_skipped_or_allowed_to_fail(name: str) -> None:
    module = importlib.import_module(f"tests.faults.{name}")
    module_marks = getattr(module, "pytestmark", [])
    module_marks = module_marks if isinstance(module_marks, list) else [module_marks]
    tests = [fn for n, fn in inspect.getmembers(module, inspect.isfunction) if n.startswith("test_")]
    assert tests, name
    for fn in tests:
        marks = {m.name for m in [*module_marks, *getattr(fn, "pytestmark", [])]}
        assert not marks & NOT_RUN, (name, fn.__name__, marks)
        # Parametrised cases can carry their own marks (pytest.param(..., marks=...)).
        for mark in getattr(fn, "pytestmark", []):
            if mark.name == "parametrize":
                for case in mark.args[1]:
                    case_marks = {m.name for m in getattr(case, "marks", ())}
                    assert not case_marks & NOT_RUN, (name, fn.__name__, case)
