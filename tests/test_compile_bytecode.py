"""`make install`'s bytecode step (scripts/compile_bytecode.py): entbench's modules and those of its
run-time dependencies, never a test or lint tool's (those compile as the tests import them)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from packaging.utils import canonicalize_name

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "scripts"))
import compile_bytecode  # scripts/ is not a package


def test_the_closure_is_entbench_and_its_run_time_dependencies_only() -> None:
    names = {canonicalize_name(d.metadata["Name"]) for d in compile_bytecode.run_time_closure()}
    # entbench's own requirements, and theirs (thinc only through spaCy's)
    assert {"entbench", "pyarrow", "duckdb", "msgspec", "spacy", "opencc", "numpy", "thinc"} <= names
    # the dev and dask extras, and what only they pull in
    assert not names & {"pytest", "hypothesis", "mypy", "ruff", "qwikidata", "datasets", "dask", "pandas"}


def test_sources_are_entbench_modules_first_then_the_dependencies_installed_files() -> None:
    paths = list(compile_bytecode.sources(compile_bytecode.run_time_closure()))
    assert all(p.endswith(".py") and Path(p).is_file() for p in paths)
    package = REPO_ROOT / "src" / "entbench"
    ours = [p for p in paths if Path(p).is_relative_to(package)]
    assert paths[: len(ours)] == ours and str(package / "engine" / "runner.py") in ours
    spec = importlib.util.find_spec("duckdb")
    assert spec is not None and spec.origin is not None and spec.origin in paths


def test_a_module_that_does_not_compile_is_left_as_it_is(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text("x = 1\n", encoding="utf-8")
    bad.write_text("def (:\n", encoding="utf-8")
    assert compile_bytecode.compile_module(str(good)) is True
    assert Path(importlib.util.cache_from_source(str(good))).is_file()
    assert compile_bytecode.compile_module(str(bad)) is False
    assert not Path(importlib.util.cache_from_source(str(bad))).exists()
