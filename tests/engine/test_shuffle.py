"""The map-reduce shuffle (`engine.shuffle`): with more shards than spill groups the map spills by
group and a merge pass regroups by shard; the reducers must gather the same rows in the same order
as the direct path, and the output shards must be byte-identical (every golden target through the
merge pass: tests/engine/test_golden_paths.py)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from entbench import api
from entbench.engine import tasks
from entbench.engine.shuffle import (
    FLUSH_BYTES,
    SINK_BUFFER_BYTES,
    FileBucketSink,
    ShuffleLayout,
    gather_bucket,
    merge_group,
    merge_task_id,
    read_done,
    shard_inputs,
    shuffle_layout,
)
from entbench.engine.stats import Stats
from tests.builders.kb.support import die_after, shard_hashes
from tests.builders.wikidata.test_wikidata_build import FIXTURES, build

#: A real dump built into 7 shards; with `shuffle_groups=3` they spill in 3 groups and are merged.
SOURCE = FIXTURES / "entities-new.json.bz2"
PARAMS = ("wikidata.num_shards=7",)
SCHEMA = pa.schema([("task", pa.int32()), ("row", pa.int32()), ("text", pa.string())])
#: shard -> (map task, row) in the order its reducer must gather them
Expected = dict[int, list[tuple[int, int]]]


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stage directory of `SOURCE` built the direct way (no merge pass): the bytes every build
    through the merge pass must give. Built once for the module; read it, never write into it."""
    return build(tmp_path_factory.mktemp("direct"), SOURCE, *PARAMS)


def killed_merged_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, direct: Path, task: str, calls: int
) -> tuple[dict[str, str], Callable[..., Any], Path]:
    """Build `SOURCE` in 3 spill groups killed after `calls` calls of the task function `task`:
    (the `direct` build's shard hashes, `task`'s original function to put back, the stage's
    unfinished directory)."""
    reference = shard_hashes(direct)
    original = die_after(monkeypatch, task, calls)
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path / "out", SOURCE, *PARAMS, shuffle_groups=3)
    incomplete = next((tmp_path / "out" / "normalized" / "wikidata" / ".incomplete").iterdir())
    return reference, original, incomplete


def spill_tasks(map_dir: Path, layout: ShuffleLayout, tasks: int, rows: int) -> Expected:
    """Map tasks emitting `rows` rows each to random shards (a fixed seed); returns the rows every
    shard must receive, in the order a reducer must see them (task id order, then emit order)."""
    rng = random.Random(7)
    expected: Expected = {}
    for task in range(tasks):
        sink = FileBucketSink(map_dir, f"t{task:05d}", {"rows": SCHEMA}, layout)
        by_shard: dict[int, list[int]] = {}
        for row in range(rows):
            by_shard.setdefault(rng.randrange(layout.num_shards), []).append(row)
        for shard, shard_rows in by_shard.items():
            batch = pa.record_batch(
                [[task] * len(shard_rows), shard_rows, [f"{task}/{r}" for r in shard_rows]], schema=SCHEMA
            )
            sink.emit("rows", shard, batch)
            expected.setdefault(shard, []).extend((task, r) for r in shard_rows)
        sink.close(Stats(rows=rows))
    return expected


def gathered(directory: Path, inputs: dict[int, list[Any]], shard: int) -> list[tuple[int, int]]:
    table = gather_bucket(directory, inputs[shard], "rows", SCHEMA)
    return list(zip(table.column("task").to_pylist(), table.column("row").to_pylist(), strict=True))


def test_layout_groups_consecutive_shards_only_past_the_group_count() -> None:
    assert not shuffle_layout(64, 64).merged
    layout = shuffle_layout(6_000, 64)
    assert layout.merged and layout.shards_per_group == 94 and layout.num_groups == 64
    assert [layout.group(s) for s in (0, 93, 94, 5_999)] == [0, 0, 1, 63]
    assert shuffle_layout(130, 64).num_groups == 44  # 3 shards per group: no empty group


def test_merge_pass_at_many_tasks_and_shards_gathers_every_row_in_order(tmp_path: Path) -> None:
    """1,000 map tasks x 1,000 shards: the direct path's reducers would each open every task's
    file; after the merge each reducer reads one file per table, with the rows in map task order."""
    tasks, shards, rows = 1_000, 1_000, 12
    layout = shuffle_layout(shards, 8)
    expected = spill_tasks(tmp_path / "map", layout, tasks, rows)
    task_ids = [f"t{t:05d}" for t in range(tasks)]
    # a map task's index holds one entry per group it wrote to, not one per shard
    records = [read_done(tmp_path / "map", t) for t in task_ids]
    assert max(len(r["batches"]["rows"]) for r in records if r is not None) <= 8

    for group in range(layout.num_groups):
        merge_group(tmp_path / "map", tmp_path / "merge", task_ids, group, layout, {"rows": SCHEMA})
    merged = shard_inputs(
        tmp_path / "merge", [merge_task_id(g) for g in range(layout.num_groups)], range(shards)
    )
    assert all(len(merged[s]) == 1 and merged[s][0][0] == merge_task_id(layout.group(s)) for s in expected)
    assert len(expected) > 990  # nearly every shard has rows
    for shard in range(shards):
        assert gathered(tmp_path / "merge", merged, shard) == expected.get(shard, [])


def test_merge_buffer_bound_splits_output_into_more_batches_not_other_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = shuffle_layout(40, 4)
    expected = spill_tasks(tmp_path / "map", layout, 50, 40)
    task_ids = [f"t{t:05d}" for t in range(50)]
    monkeypatch.setattr("entbench.engine.shuffle.MERGE_BUFFER_BYTES", 2_000)
    merge_group(tmp_path / "map", tmp_path / "merge", task_ids, 1, layout, {"rows": SCHEMA})
    inputs = shard_inputs(tmp_path / "merge", [merge_task_id(1)], range(10, 20))
    assert max(len(inputs[s][0][1]["rows"]) for s in range(10, 20)) > 1  # flushed several times
    for shard in range(10, 20):
        assert gathered(tmp_path / "merge", inputs, shard) == expected[shard]


@pytest.mark.parametrize("workers", [1, 2])
def test_wikidata_build_through_the_merge_pass_writes_identical_bytes(
    tmp_path: Path, direct: Path, workers: int
) -> None:
    reference = shard_hashes(direct, files=True)
    stage = build(tmp_path / "merged", SOURCE, *PARAMS, workers=workers, shuffle_groups=3, chunk_mb=1)
    assert shard_hashes(stage, files=True) == reference
    assert not (stage / "_merge").exists()  # spills are scratch


def test_build_killed_in_the_merge_pass_resumes_to_identical_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, direct: Path
) -> None:
    reference, original, incomplete = killed_merged_build(tmp_path, monkeypatch, direct, "merge_task", 1)
    assert sorted(p.name for p in (incomplete / "_merge").glob("*.done.json")) == ["g00000.done.json"]
    monkeypatch.setattr(tasks, "merge_task", original)
    merged_again: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> int:
        merged_again.append(args[2])
        return original(*args, **kwargs)

    monkeypatch.setattr(tasks, "merge_task", counting)
    assert shard_hashes(build(tmp_path / "out", SOURCE, *PARAMS, shuffle_groups=3)) == reference
    assert merged_again == [1, 2]


def test_resume_with_another_layout_runs_the_map_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, direct: Path
) -> None:
    # Killed before the reduce.
    reference, original, _ = killed_merged_build(tmp_path, monkeypatch, direct, "shard_task", 0)
    monkeypatch.setattr(tasks, "shard_task", original)
    logged: list[str] = []
    dirs = api.build(
        "wikidata",
        sources=[f"wikidata={SOURCE}"],
        params=list(PARAMS),
        out=tmp_path / "out",
        progress=False,
        log=logged.append,
        card=False,
    )
    assert any("another --chunk-mb or layout" in m for m in logged)
    assert shard_hashes(dirs["wikidata"]) == reference


def test_map_spills_are_deleted_once_every_group_is_merged_and_a_resume_needs_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, direct: Path
) -> None:
    reference, original, incomplete = killed_merged_build(tmp_path, monkeypatch, direct, "shard_task", 2)
    assert not list((incomplete / "_map").glob("*.spill"))
    assert list((incomplete / "_map").glob("*.done.json"))
    assert len(list((incomplete / "_merge").glob("*.done.json"))) == 3
    monkeypatch.setattr(tasks, "shard_task", original)
    assert shard_hashes(build(tmp_path / "out", SOURCE, *PARAMS, shuffle_groups=3)) == reference


def test_a_task_spills_one_file_and_its_record_locates_every_batch(tmp_path: Path) -> None:
    """A map task writes all its tables to one spill file; the record gives each batch's group,
    offset and length, and reading those spans gives the rows back."""
    layout = shuffle_layout(4, 64)
    expected = spill_tasks(tmp_path, layout, 1, 50)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t00000.done.json", "t00000.spill"]
    record = read_done(tmp_path, "t00000")
    assert record is not None
    spans = record["batches"]["rows"]
    assert sorted(group for group, _offset, _length in spans) == sorted(expected)
    ends = [offset + length for _group, offset, length in spans]
    assert ends[-1] == (tmp_path / "t00000.spill").stat().st_size
    assert all(offset == end for (_g, offset, _l), end in zip(spans[1:], ends, strict=False))
    inputs = shard_inputs(tmp_path, ["t00000"], range(4))
    for shard, rows in expected.items():
        assert gathered(tmp_path, inputs, shard) == rows


def test_a_record_of_an_older_spill_layout_counts_as_unfinished(tmp_path: Path) -> None:
    """An unfinished build of an older entbench left per-table spill files and records without
    `spill_format`: its tasks run again (their files are rewritten) instead of being misread."""
    spill_tasks(tmp_path, shuffle_layout(4, 64), 1, 10)
    path = tmp_path / "t00000.done.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    assert read_done(tmp_path, "t00000") == record
    del record["spill_format"]
    path.write_text(json.dumps(record), encoding="utf-8")
    assert read_done(tmp_path, "t00000") is None


def test_a_sink_writes_a_batch_once_its_rows_hold_flush_bytes(tmp_path: Path) -> None:
    """Wide rows (a Wikipedia scan's pages) are written once they hold `FLUSH_BYTES`, not held to
    `FLUSH_ROWS`: a task's buffer stays bounded; the reducer gathers the same rows in order."""
    layout = shuffle_layout(1, 64)
    sink = FileBucketSink(tmp_path, "t00000", {"rows": SCHEMA}, layout)
    text = "x" * 100_000  # ~84 rows make FLUSH_BYTES (8 MB)
    for part in range(10):
        rows = list(range(part * 50, part * 50 + 50))
        sink.emit("rows", 0, pa.record_batch([[0] * 50, rows, [text] * 50], schema=SCHEMA))
    sink.close(Stats(rows=500))
    record = read_done(tmp_path, "t00000")
    assert record is not None
    spans = record["batches"]["rows"]
    assert len(spans) >= 5 and max(length for _g, _o, length in spans) < 2 * FLUSH_BYTES
    assert gathered(tmp_path, shard_inputs(tmp_path, ["t00000"], [0]), 0) == [(0, r) for r in range(500)]


def test_a_sink_over_many_groups_writes_everything_once_its_buffers_hold_sink_buffer_bytes(
    tmp_path: Path,
) -> None:
    """Rows spread over many shards stay under each shard's `FLUSH_BYTES` for long; past
    `SINK_BUFFER_BYTES` over all of them the sink writes every buffer, so a task holds a bounded
    amount whatever its size and its number of spill groups; each reducer gathers its rows in order."""
    shards = 8
    layout = shuffle_layout(shards, 64)
    sink = FileBucketSink(tmp_path, "t00000", {"rows": SCHEMA}, layout)
    text = "y" * 10_000
    per_emit = 40  # ~0.4 MB an emit, 5 per shard: far under FLUSH_BYTES for each shard
    emits = 0
    while emits * per_emit * len(text) < 3 * SINK_BUFFER_BYTES:
        shard = emits % shards
        rows = list(range(emits * per_emit, (emits + 1) * per_emit))
        sink.emit("rows", shard, pa.record_batch([[0] * per_emit, rows, [text] * per_emit], schema=SCHEMA))
        emits += 1
        assert sink._buffered < SINK_BUFFER_BYTES  # written as soon as the budget is reached
    sink.close(Stats(rows=emits * per_emit))
    record = read_done(tmp_path, "t00000")
    assert record is not None
    written = {group for group, _offset, _length in record["batches"]["rows"]}
    assert written == set(range(shards))
    assert len(record["batches"]["rows"]) >= 3 * shards  # several batches per shard, not one at the end
    inputs = shard_inputs(tmp_path, ["t00000"], list(range(shards)))
    for shard in range(shards):
        expected = [
            (0, r) for e in range(shard, emits, shards) for r in range(e * per_emit, (e + 1) * per_emit)
        ]
        assert gathered(tmp_path, inputs, shard) == expected


def test_a_table_sharded_in_one_call_counts_its_bytes_once_and_each_reducer_gets_its_rows(
    tmp_path: Path,
) -> None:
    """`emit_sharded` counts a table's bytes once and shares them among its parts by rows (a part's
    own count walked every column, for tasks x groups parts): the sink's buffers hold the table's
    bytes in all, a buffer past `FLUSH_BYTES` is still written, and every reducer gathers its rows
    in emit order, as with one `emit` per shard."""
    shards = 23
    layout = shuffle_layout(shards, 64)
    sink = FileBucketSink(tmp_path, "t00000", {"rows": SCHEMA}, layout)
    rng = random.Random(11)
    rows = 600
    routes = [rng.randrange(shards) for _ in range(rows)]
    texts = ["z" * rng.randrange(1, 2_000) for _ in range(rows)]
    table = pa.table([[0] * rows, list(range(rows)), texts], schema=SCHEMA)
    sink.emit_sharded("rows", table, np.array(routes))
    assert sink._buffered == table.nbytes
    wide = pa.table([[0] * 90, list(range(rows, rows + 90)), ["w" * 100_000] * 90], schema=SCHEMA)
    sink.emit_sharded("rows", wide, np.full(90, 3))  # ~9 MB to one shard: written at once
    assert ("rows", 3) not in sink._pending and sink._buffered < table.nbytes
    sink.close(Stats(rows=rows + 90))
    inputs = shard_inputs(tmp_path, ["t00000"], list(range(shards)))
    for shard in range(shards):
        expected = [(0, r) for r in range(rows) if routes[r] == shard]
        if shard == 3:
            expected += [(0, r) for r in range(rows, rows + 90)]
        assert gathered(tmp_path, inputs, shard) == expected
