"""A process imports the stage modules it uses, not every dataset's (issue 35): each pipeline
declares its stages by name with a function that makes them (`registry.register_stage`), so the
target list, the stage names and the docs sections are read without importing any stage module
(or the DuckDB, pyarrow compute and numpy they import), and a build's stage graph imports the
modules of its own stages only. Checked in a fresh interpreter: this one has imported them all."""

from __future__ import annotations

import json
import subprocess
import sys

import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
from entbench.engine import registry

#: Run in a fresh interpreter: a snippet of registry lookups, then the stage modules and heavy
#: libraries they left imported, as JSON.
_PROBE = """
import json, sys
import entbench.builders
from entbench.engine import registry
{lookups}
heavy = ("duckdb", "numpy", "pyarrow.compute", "pyarrow")
print(json.dumps({{
    "stage_modules": sorted(m for m in sys.modules if ".stages." in m and m.startswith("entbench.builders.")),
    "heavy": sorted(m for m in heavy if m in sys.modules),
}}))
"""


def _imported_after(lookups: str) -> dict[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(lookups=lookups)],
        check=True,
        capture_output=True,
        text=True,
    )
    found: dict[str, list[str]] = json.loads(done.stdout)
    return found


def test_targets_stage_names_and_docs_sections_import_no_stage_module() -> None:
    found = _imported_after(
        "targets = registry.targets(); names = registry.stage_names(); "
        "docs = registry.doc_sections(); datasets = registry.datasets(); exports = registry.exports(); "
        "assert targets and names and docs and datasets and exports"
    )
    assert found == {"stage_modules": [], "heavy": []}


def test_one_targets_stage_graph_imports_its_own_stage_modules_only() -> None:
    found = _imported_after(
        "registry.configure_sources(['wikidata']); "
        "order = registry.stage_order(registry.get_target('wikidata').stages); "
        "assert [s.stage_name for s in order] == ['wikidata']"
    )
    assert found["stage_modules"] == ["entbench.builders.wikidata.stages.scan"]
    assert "duckdb" not in found["heavy"]


def test_every_declared_stage_is_made_under_the_name_it_was_declared_with() -> None:
    made = registry.stages()
    assert set(made) == registry.stage_names()
    assert all(stage.stage_name == name for name, stage in made.items())
    # A stage made once is the one every lookup returns (EntEval's tasks gather the registry's).
    tasks = made["enteval_tasks"]
    assert all(registry.get_stage(task.stage_name) is task for task in tasks.tasks)
