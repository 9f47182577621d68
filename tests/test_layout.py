"""The source layout checks itself (issue 20; architecture.md, "Layout"): one package per dataset
under builders/, registrations only in a dataset's pipeline.py, every pipeline found by the
registry, no source file over 500 lines. The import layering is checked by `lint-imports`
(`make lint`)."""

from __future__ import annotations

import ast
from pathlib import Path

import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
from entbench.engine import registry

SRC = Path(__file__).resolve().parents[1] / "src" / "entbench"
BUILDERS = SRC / "builders"
#: Files allowed past 500 lines, with why (none today).
LONG_FILES: dict[str, str] = {}


def test_builders_holds_one_package_per_dataset() -> None:
    assert sorted(p.name for p in BUILDERS.glob("*.py")) == ["__init__.py"]
    folders = sorted(p.name for p in BUILDERS.iterdir() if p.is_dir() and p.name != "__pycache__")
    packages = sorted(p.name for p in BUILDERS.iterdir() if (p / "__init__.py").is_file())
    assert packages == folders
    datasets = registry.datasets()
    assert set(datasets) <= set(packages) and all(datasets.values())  # each registers a target
    # A package without a pipeline holds logic other datasets' stages and commands share.
    assert set(packages) - set(datasets) == {"edge_probing"}


def test_only_pipeline_modules_register_stages_targets_and_docs_sections() -> None:
    registering = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in (
                "register_stage",
                "register_target",
                "register_docs",
                "register_doc_instances",
            ):
                registering.add(path.relative_to(SRC).as_posix())
    assert registering
    assert all(p.startswith("builders/") and p.endswith("/pipeline.py") for p in registering), registering


def test_every_pipeline_module_is_found_by_the_registry() -> None:
    modules = sorted(
        "entbench." + ".".join(p.relative_to(SRC).with_suffix("").parts)
        for p in BUILDERS.glob("*/pipeline.py")
    )
    assert sorted(registry.pipeline_modules().values()) == modules
    # Each target is recorded under the dataset whose pipeline registered it.
    assert {t.dataset for t in registry.targets().values()} == set(registry.pipeline_modules())


def test_no_source_file_over_500_lines() -> None:
    long = {}
    for path in SRC.rglob("*.py"):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > 500:
            long[path.relative_to(SRC).as_posix()] = lines
    assert set(long) <= set(LONG_FILES), long
