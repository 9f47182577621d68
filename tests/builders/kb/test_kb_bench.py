"""The kb benchmark's world and baseline (bench/kb/): a small generated pair built by entbench must give
the same tables as the independently written bare DuckDB queries, so the benchmark compares equal work.

The generated world has what the real fixtures lack in volume: a 21-level P279 DAG with cycles,
internal items, deleted and redirected ids, preferred and deprecated statements.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.builders.kb.support import build_kb, read_table, stats

BENCH = Path(__file__).resolve().parents[3] / "bench" / "kb"


def load_generator() -> ModuleType:
    name = "entbench_bench_kb_gen"  # bench/ holds scripts, not a package
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / "gen_kb.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is created
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A small pair, built by entbench (two shards per kb stage) and by the bare script."""
    root = tmp_path_factory.mktemp("kb-bench")
    info = load_generator().generate(root / "dumps", items=1500, classes=2000, seed=11)
    params = [f"{s}.num_shards=2" for s in ("internal_filter", "entity_diff", "coarse_types", "top_snaks")]
    sources = [f"wikidata_old={root / 'dumps' / 'old.json'}", f"wikidata_new={root / 'dumps' / 'new.json'}"]
    dirs = build_kb(root / "out", sources=sources, params=params)
    cmd = [sys.executable, str(BENCH / "bare_kb.py"), "--old", str(dirs["wikidata_old"])]
    cmd += ["--new", str(dirs["wikidata_new"]), "--out", str(root / "bare"), "--threads", "1"]
    bare = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return {"info": info, "dirs": dirs, "bare": bare, "bare_dir": root / "bare"}


def sorted_rows(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


def test_generated_world_has_the_features_the_benchmark_needs(world: dict[str, Any]) -> None:
    info = world["info"]
    assert info.depth >= 15 and info.cycle_edges > 0
    assert info.deleted > 0 and info.redirected > 0 and info.added > 0 and info.p31_changed > 0
    s = stats(world["dirs"]["internal_filter"])
    assert s["old_dropped_instance_of_internal"] > 0 and s["old_dropped_subclass_of_internal"] > 0
    d = stats(world["dirs"]["entity_diff"])
    assert d["ids_deleted"] == info.deleted and d["ids_redirected"] == info.redirected


@pytest.mark.parametrize(
    ("stage", "table", "columns"),
    [
        ("internal_filter", "kept", None),
        ("internal_filter", "removed", ["snapshot", "qid", "reason"]),
        ("entity_diff", "kb_entities", None),
        ("entity_diff", "id_changes", None),
        ("type_closure", "type_closure", None),
        ("coarse_types", "coarse_types", None),
        ("top_snaks", "top_snaks", None),
        ("top_snaks", "entity_snaks", None),
    ],
)
def test_entbench_equals_the_bare_baseline(
    world: dict[str, Any], stage: str, table: str, columns: list[str] | None
) -> None:
    ours = read_table(world["dirs"][stage], table)
    theirs = pq.read_table(world["bare_dir"] / f"{table}.parquet")
    names = columns or ours.column_names
    assert sorted_rows(ours.select(names).to_pylist()) == sorted_rows(theirs.select(names).to_pylist())
    assert ours.num_rows == world["bare"]["rows"][table] > 0
