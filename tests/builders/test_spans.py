"""Map tasks over spans of row groups, streamed a batch at a time, give the rows of whole shards.

On the fixtures every shard is one row group, so every stage's tasks are whole upstream shards. Here
the demo world's targets (and Hansel's on its zhwiki fixture) are built again with row groups of
~64 KB of values (the scans' `pages` shards become dozens of row groups) and one row group per map
task: every table of every stage must hold the same rows, and the manifests the same stats, as the
session's shared build of the demo world (`world_out`, the normal row groups and spans: neither
enters a fingerprint, so its stage directories are the ones a normal build here would write).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from entbench import api
from entbench.engine import build_out, inputs, row_groups
from entbench.engine.manifest import load_manifest

#: Built from the bundled demo world (no --config, no --source), its zhwiki fixture for Hansel.
TARGETS = ("alias-table", "wikireading", "hansel-train")


def build_all(out: Path) -> dict[str, Path]:
    """Every target's stage directories (stage -> directory), built into `out`."""
    dirs: dict[str, Path] = {}
    for target in TARGETS:
        built = api.build(
            target,
            out=out,
            progress=False,
            log=lambda _m: None,
            card=False,
        )
        dirs.update(built)
    return dirs


def built(world: Path) -> dict[str, Path]:
    """The same targets' stage directories in the shared build of the demo world (nothing built)."""
    dirs: dict[str, Path] = {}
    for target in TARGETS:
        listing = build_out.listing_file(world, target).read_bytes()
        dirs.update({stage: world / rel for stage, rel in build_out.listed_stages(listing).items()})
    return dirs


def tables(directory: Path) -> dict[str, pa.Table]:
    """Each table's rows, sorted by their sort key (shard boundaries aside), as one Arrow table.

    Arrow compares them (`Table.equals`: values and types, whatever the chunks): rows as Python
    dicts sorted by their keys' JSON took 40% of this test's time."""
    manifest = load_manifest(directory)
    out = {}
    for name, doc in manifest["outputs"].items():
        shard_tables = [pq.read_table(directory / s["file"]) for s in doc["shards"]]
        table = pa.concat_tables(shard_tables) if shard_tables else pa.table({})
        # The sort key is unique (the writers refuse duplicates), so the order is total.
        sort_by = [(key, "ascending") for key in doc["sort_by"]]
        out[name] = table.sort_by(sort_by) if sort_by and table.num_rows else table
    return out


def assert_same_tables(small: Path, normal: Path, stage: str) -> None:
    """Every table of `small` holds the rows of the same table of `normal`."""
    small_tables, normal_tables = tables(small), tables(normal)
    assert set(small_tables) == set(normal_tables), stage
    for name, table in normal_tables.items():
        other = small_tables[name]
        assert other.schema == table.schema, f"{stage}.{name}"
        assert other.equals(table), f"{stage}.{name}: {other.num_rows} rows != {table.num_rows} rows"


def test_one_row_group_per_task_gives_every_stage_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, world_out: Path
) -> None:
    normal = built(world_out)
    monkeypatch.setattr(row_groups, "ROW_GROUP_BYTES", 64 << 10)
    monkeypatch.setattr(inputs, "SPAN_BYTES", 1)
    small = build_all(tmp_path / "small")
    for scan, least in (("wiki", 2), ("wikipedia", 10)):  # the tasks really are parts of shards
        pages = load_manifest(small[scan])["outputs"]["pages"]["shards"][0]["file"]
        assert pq.ParquetFile(small[scan] / pages).metadata.num_row_groups >= least
    assert set(small) == set(normal)
    for stage, directory in normal.items():
        assert_same_tables(small[stage], directory, stage)
        assert load_manifest(small[stage])["stats"] == load_manifest(directory)["stats"], stage
