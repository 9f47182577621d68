"""The external sort (`engine.external_sort`): a kept table past `SORT_MEMORY_BYTES` is sorted
through runs on disk and merged a row group at a time; its shard must be byte for byte the one
the in-memory path writes, and a build killed in the middle of it must resume to the same bytes.
Every golden target through it: tests/engine/test_golden_paths.py."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from entbench.engine import external_sort, shards, tasks
from entbench.engine.shards import DuplicateKeyError, prepare_rows, write_parquet
from tests.builders.kb.support import shard_hashes
from tests.builders.wikidata.test_wikidata_build import FIXTURES, build

SCHEMA = pa.schema(
    [
        ("subject", pa.string()),
        ("ordinal", pa.int32()),
        ("label", pa.string()),
        ("values", pa.list_(pa.struct([("kind", pa.string()), ("amount", pa.float64())]))),
    ]
)
SORT_BY = ("subject", "ordinal")
META = {"entbench.table": "claims"}


def claims(rows: int, seed: int = 3) -> pa.Table:
    """`rows` rows with a unique (subject, ordinal) key, in a shuffled order: string keys that sort
    unlike their numbers (Q10 < Q2), repeated labels (a dictionary column), nulls and nested lists."""
    rng = random.Random(seed)
    keys = [(f"Q{rng.randrange(rows // 3 + 1)}", ordinal) for ordinal in range(rows)]
    rng.shuffle(keys)
    return pa.table(
        {
            "subject": [s for s, _ in keys],
            "ordinal": [o for _, o in keys],
            "label": [None if o % 7 == 0 else f"label {o % 5}" for _, o in keys],
            "values": [
                [{"kind": rng.choice("abc"), "amount": rng.random()} for _ in range(o % 3)] for _, o in keys
            ],
        },
        schema=SCHEMA,
    )


@pytest.fixture
def small_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Runs of ~20 KB read back 50 rows at a time, row groups of 700 rows; returns, per external
    sort, how many runs it merged."""
    monkeypatch.setattr(external_sort, "SORT_MEMORY_BYTES", 20_000)
    monkeypatch.setattr(external_sort, "RUN_BATCH_ROWS", 50)
    monkeypatch.setattr(shards, "ROW_GROUP_SIZE", 700)
    merged: list[int] = []
    original = external_sort._RunMerger.__init__

    def counting(self: Any, paths: Any, schema: pa.Schema) -> None:
        merged.append(len(paths))
        original(self, paths, schema)

    monkeypatch.setattr(external_sort._RunMerger, "__init__", counting)
    return merged


def in_memory(table: pa.Table, path: Path) -> bytes:
    rows = shards.cast_rows(table, SCHEMA)
    write_parquet(
        rows, path, schema=SCHEMA, metadata=META, sort_by=SORT_BY, order=shards.sort_order(rows, SORT_BY)
    )
    return path.read_bytes()


def external(table: pa.Table, path: Path, scratch: Path, batch_rows: int = 97) -> bytes:
    external_sort.write_sorted(
        table.to_batches(max_chunksize=batch_rows),
        path,
        schema=SCHEMA,
        metadata=META,
        sort_by=SORT_BY,
        scratch=scratch,
    )
    return path.read_bytes()


def test_runs_merged_a_row_group_at_a_time_give_the_in_memory_bytes(
    tmp_path: Path, small_runs: list[int]
) -> None:
    table = claims(5_000)
    written = external(table, tmp_path / "external.parquet", tmp_path / "scratch")
    assert written == in_memory(table, tmp_path / "memory.parquet")
    assert small_runs[0] > 5  # many runs, each feeding every row group
    assert pa.parquet.ParquetFile(tmp_path / "external.parquet").metadata.num_row_groups == 8
    assert list((tmp_path / "scratch").iterdir()) == []  # the runs are scratch
    back = pa.parquet.read_table(tmp_path / "external.parquet")
    assert back.equals(prepare_rows(table, SCHEMA, SORT_BY))


def test_one_run_and_one_row_each_give_the_in_memory_bytes(tmp_path: Path, small_runs: list[int]) -> None:
    for rows in (1, 40):
        table = claims(rows, seed=rows)
        assert external(table, tmp_path / f"e{rows}.parquet", tmp_path / "s") == in_memory(
            table, tmp_path / f"m{rows}.parquet"
        )
    assert small_runs == [1, 1]


def test_no_rows_give_the_empty_shard(tmp_path: Path) -> None:
    empty = SCHEMA.empty_table()
    assert external(empty, tmp_path / "e.parquet", tmp_path / "s") == in_memory(empty, tmp_path / "m.parquet")


def test_a_repeated_key_is_refused_and_leaves_no_shard(tmp_path: Path, small_runs: list[int]) -> None:
    # Enough rows for run files beside the last run (kept in memory): they are removed too.
    table = pa.concat_tables([claims(1500), claims(1500).slice(0, 1)])
    with pytest.raises(DuplicateKeyError, match="share a key"):
        external(table, tmp_path / "e.parquet", tmp_path / "s")
    assert not (tmp_path / "e.parquet").exists()
    assert list((tmp_path / "s").iterdir()) == []
    assert small_runs == []  # refused before any merge


def test_a_build_killed_while_merging_runs_resumes_to_identical_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_runs: list[int]
) -> None:
    source = FIXTURES / "entities-new.json.bz2"
    reference = shard_hashes(build(tmp_path / "ref", source), files=True)
    monkeypatch.setattr(tasks, "SORT_MEMORY_BYTES", 0)
    original = external_sort._RunMerger.group
    calls: list[int] = []

    def dying(self: Any, run_of: Any) -> pa.Table:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(self, run_of)

    monkeypatch.setattr(external_sort._RunMerger, "group", dying)
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path / "out", source)
    incomplete = next((tmp_path / "out" / "normalized" / "wikidata" / ".incomplete").iterdir())
    assert not list(incomplete.rglob("part-*.parquet.tmp*")) and not list(incomplete.rglob(".part-*"))
    monkeypatch.setattr(external_sort._RunMerger, "group", original)
    assert shard_hashes(build(tmp_path / "out", source), files=True) == reference
