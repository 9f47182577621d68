"""The demo world's map-reduce stages through the two paths a small build never takes, in one build:
the merge pass (`engine.shuffle`: one spill group, so every stage of more than one shard regroups
its spills by shard first) and the external sort (`engine.external_sort`: every stage's
`sort_memory_bytes` at 0, so every keyed table a reduce leaves as mapped is sorted through runs on
disk, runs of ~20 KB). Every shard of every
golden target must still be byte for byte the committed golden one.

One build serves both because the merge pass here flushes every ~20 KB (`MERGE_BUFFER_BYTES`), as it
does every 64 MB on a full dump: a shard's rows reach its reducer in many batches, so the external
sort cuts them into many runs, as it does past 16 MB without the merge pass (without the small
buffer each merged shard was one batch, hence one run, and one build could not stand for both).

Only the map-reduce stages are built here (their directories are left out of the copy of the shared
world build this test starts from): the two paths live in the shuffle and the reduce, which shard
stages (EntEval's tasks, the few-shot and zero-shot samples, the statistics) do not have. Those are
found done, as copies of the shared build's, which tests/test_golden.py checks itself; the
map-reduce stages built again here include every dump scan, every DuckDB join and every reducer.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import entbench.builders  # noqa: F401 - declares every dataset's pipeline to the registry
from entbench import api, golden
from entbench.builders.wikidata.stages.scan import WikidataScan
from entbench.engine import build_out, external_sort, registry, row_groups, shuffle, tasks
from entbench.engine.stage import Stage
from tests.world_support import DONE


def shard_stage_dirs(world: Path) -> list[Path]:
    """The directories (`<layer>/<stage>`) of the world build's shard stages: no map, no shuffle."""
    known = registry.stages()
    dirs = set()
    for target in golden.GOLDEN_TARGETS:
        listing = build_out.listing_file(world, target).read_bytes()
        for stage, rel in build_out.listed_stages(listing).items():
            if stage in known and not known[stage].is_map_reduce:
                dirs.add(Path(rel).parent)
    return sorted(dirs)


def copy_shard_stages(world: Path, out: Path) -> list[str]:
    """Copy the world build's shard stages into `out`; returns their names."""
    copied = shard_stage_dirs(world)
    for rel in copied:
        shutil.copytree(world / rel, out / rel)
    assert not (out / DONE).exists()
    return [rel.name for rel in copied]


@pytest.mark.timeout(900)  # every map-reduce stage of the demo world built again, through other paths
def test_every_golden_target_through_the_merge_pass_and_the_external_sort_matches_the_golden_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, world_out: Path
) -> None:
    monkeypatch.setattr(shuffle, "MERGE_BUFFER_BYTES", 20_000)
    # The engine's default and every stage class that declares its own limit (the Wikidata scan,
    # the kb's query stages).
    declaring = {
        cls
        for stage in registry.stages().values()
        for cls in type(stage).__mro__
        if "sort_memory_bytes" in vars(cls)
    }
    assert Stage in declaring and WikidataScan in declaring
    for cls in declaring:
        monkeypatch.setattr(cls, "sort_memory_bytes", 0)
    assert {stage.sort_memory_bytes for stage in registry.stages().values()} == {0}
    monkeypatch.setattr(external_sort, "RUN_BATCH_ROWS", 50)
    assert row_groups.ROW_GROUP_SIZE == 65_536  # the golden files' row groups
    merged_stages: set[str] = set()
    runs: dict[tuple[str, str], list[int]] = {}
    merge_task, write_sorted, run_merger = (
        tasks.merge_task,
        tasks.write_sorted,
        external_sort._RunMerger.__init__,
    )
    current: list[tuple[str, str]] = []

    def merging(work_dir: str, *args: Any, **kwargs: Any) -> int:
        merged_stages.add(Path(work_dir).parent.parent.name)
        return merge_task(work_dir, *args, **kwargs)

    def sorting(batches: Any, path: Path, **kwargs: Any) -> Any:
        # <out>/<layer>/<stage>/.incomplete/<version>/<table>/part-….parquet
        current[:] = [(path.parents[3].name, path.parent.name)]
        return write_sorted(batches, path, **{**kwargs, "run_bytes": 20_000})

    def counting(self: Any, sorted_runs: Any, schema: pa.Schema, sort_by: Any) -> None:
        runs.setdefault(current[0], []).append(len(sorted_runs))
        run_merger(self, sorted_runs, schema, sort_by)

    monkeypatch.setattr(tasks, "merge_task", merging)
    monkeypatch.setattr(tasks, "write_sorted", sorting)
    monkeypatch.setattr(external_sort._RunMerger, "__init__", counting)

    copied = copy_shard_stages(world_out, tmp_path)
    assert {"enteval_tasks", "hansel_fewshot", "series_zeroshot"} <= set(copied), copied
    for target in golden.GOLDEN_TARGETS:
        dirs = api.build(
            target, out=tmp_path, progress=False, log=lambda _m: None, card=False, shuffle_groups=1
        )
        expected = json.loads((golden.golden_dir() / f"{target}.json").read_text(encoding="utf-8"))
        assert golden.diff(expected, golden.stage_hashes(dirs)) == [], target

    scans = {
        "wikidata",
        "wikipedia",
        "wiki",
        "alias_table",
        "mention_stats",
        "wikireading_instances",
        "wikient",
    }
    assert scans <= merged_stages, merged_stages
    # The dump scans' kept tables, the ones that reach 16 MB on a real dump, all sorted on disk; the
    # Wikidata and enwiki scans' through several runs in every shard (the zhwiki fixture's links are
    # one run a shard: ~20 KB).
    kept = {
        ("wikidata", "truthy_claims"),
        ("wikidata", "sitelinks"),
        ("wikipedia", "pages"),
        ("wiki", "links"),
    }
    assert kept <= set(runs), sorted(runs)
    several = {table: runs[table] for table in kept if table[0] != "wiki"}
    assert all(min(merged) > 1 for merged in several.values()), several
